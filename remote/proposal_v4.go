package remote

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// Proposals of format version 4 (docs/publication.md §3): a proposal
// version is one immutable object at ProposalKey(G, id), the key form
// version 3's registrations used too. Its bytes are a descriptor line,
// then the pack of the objects its head needs that G's head does not
// reach:
//
//	{"version":4,"publication":"<uuidv7>","parent":G,"parentHead":"<hex>",
//	 "head":"<hex>","time":<unix ms>[,"author":"<utf-8>"],"blake3":"<hex>",
//	 "size":<pack bytes>}\n<pack>
//
// (one line, compact, fields in that order, author absent when unknown.)
// The descriptor says its version first. A version-3 registration left in
// the store by an upgrade starts {"version":1, and a version-4 reader
// refuses it with ErrForeignProposal: not foldable, declined like a
// proposal that does not merge. A version-3 reader refuses a version-4
// proposal in turn (its decoder refuses unknown fields), so neither
// protocol folds the other's.

// ErrForeignProposal: the object at a proposal key is not a version-4
// proposal (a version-3 registration, say).
var ErrForeignProposal error = noinit.Error("remote: not a version-4 proposal")

// ErrCorruptProposal refines ErrIntegrity: a version-4 proposal that is
// not what its key and its own descriptor say.
var ErrCorruptProposal error = &noinit.Wrapped{Msg: "remote: corrupt proposal: remote: integrity violation", Base: errIntegrity}

// GroupsPrefix holds group packs.
const GroupsPrefix = "packs/groups/"

// GroupPackKeyV4 is packs/groups/<blake3, 64 hex>.pack.
func GroupPackKeyV4(sum cas.ID) string { return GroupsPrefix + sum.String() + packSuffix }

// ProposalV4 is the descriptor of a version-4 proposal.
type ProposalV4 struct {
	Publication string
	Parent      uint64 // G: the generation it was built on
	ParentHead  cas.ID // G's head (zero for the empty notebook)
	Head        cas.ID // its head commit, in the pack
	Time        uint64 // the proposer's clock (Unix ms)
	Author      string // UTF-8, at most MaxAuthorBytes; empty: unknown
	Sum         cas.ID // BLAKE3 of the pack
	Size        int64  // the pack's bytes
}

// Key is the proposal's key.
func (d ProposalV4) Key() string { return ProposalKey(d.Parent, d.Publication) }

var proposalV4Fields = []string{"version", "publication", "parent", "parentHead", "head", "time", "author", "blake3", "size"}

// EncodeProposalV4 returns the object a proposer PUTs: the descriptor of
// pack (its Sum and Size are set from pack), then pack.
func EncodeProposalV4(d ProposalV4, pack []byte) ([]byte, error) {
	d.Sum, d.Size = cas.Sum(pack), int64(len(pack))
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorruptProposal, d.Key(), err)
	}
	b := make([]byte, 0, 400+len(d.Author)+len(pack))
	b = appendString(append(b, `{"version":4,"publication":`...), d.Publication)
	b = strconv.AppendUint(append(b, `,"parent":`...), d.Parent, 10)
	b = appendID(append(b, `,"parentHead":`...), d.ParentHead)
	b = appendID(append(b, `,"head":`...), d.Head)
	b = strconv.AppendUint(append(b, `,"time":`...), d.Time, 10)
	if d.Author != "" {
		b = appendUTF8(append(b, `,"author":`...), d.Author)
	}
	b = appendID(append(b, `,"blake3":`...), d.Sum)
	b = strconv.AppendInt(append(b, `,"size":`...), d.Size, 10)
	b = append(b, "}\n"...)
	return append(b, pack...), nil
}

func (d ProposalV4) validate() error {
	switch {
	case !IsPublicationID(d.Publication):
		return fmt.Errorf("publication is not a UUIDv7")
	case d.Head.IsZero() || d.Head == d.ParentHead:
		return fmt.Errorf("head is zero or equals its parent")
	case (d.Parent == 0) != d.ParentHead.IsZero():
		return fmt.Errorf("parent head and generation disagree")
	case d.Size <= 0 || d.Size > MaxPackSize:
		return fmt.Errorf("pack size %d", d.Size)
	}
	return checkAuthor(d.Author)
}

// DecodeProposalV4 decodes the object read at key: its descriptor, checked
// against the key, and its pack, checked against the descriptor's size and
// BLAKE3. A version-3 registration (or anything whose first field is
// another version) is ErrForeignProposal; anything else malformed is
// ErrCorruptProposal.
func DecodeProposalV4(key string, data []byte) (ProposalV4, []byte, error) {
	kind, g, id, _, _ := ParseProposalEntry(key)
	if kind != EntryProposal {
		return ProposalV4{}, nil, fmt.Errorf("%w: %q is not a proposal key", ErrInvalidKey, key)
	}
	line, pack, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return ProposalV4{}, nil, fmt.Errorf("%w: %s: no descriptor line", ErrCorruptProposal, key)
	}
	if v := ManifestVersionOf(line); v != ManifestV4Version {
		return ProposalV4{}, nil, fmt.Errorf("%w: %s: descriptor version %d", ErrForeignProposal, key, v)
	}
	var d ProposalV4
	p := &parser{b: line}
	err := p.objectOpt(proposalV4Fields, 1<<6, func(f int) error {
		switch f {
		case 0:
			_, err := p.uint()
			return err
		case 1:
			return p.stringTo(&d.Publication)
		case 2:
			return p.uintTo(&d.Parent)
		case 3:
			return p.idTo(&d.ParentHead)
		case 4:
			return p.idTo(&d.Head)
		case 5:
			return p.uintTo(&d.Time)
		case 6:
			err := p.utf8To(&d.Author, MaxAuthorBytes)
			if err == nil && d.Author == "" {
				err = fmt.Errorf("an empty author is written as no field")
			}
			return err
		case 7:
			return p.idTo(&d.Sum)
		default:
			return p.sizeTo(&d.Size)
		}
	})
	if err == nil {
		err = p.end()
	}
	if err == nil {
		err = d.validate()
	}
	switch {
	case err != nil:
	case d.Parent != g || d.Publication != id:
		err = fmt.Errorf("the descriptor does not match its key")
	case int64(len(pack)) != d.Size || cas.Sum(pack) != d.Sum:
		err = fmt.Errorf("the pack does not match its descriptor")
	}
	if err != nil {
		return ProposalV4{}, nil, fmt.Errorf("%w: %s: %w", ErrCorruptProposal, key, err)
	}
	// Canonical form: what the encoder writes and nothing else.
	if again, _ := EncodeProposalV4(d, pack); !bytes.Equal(again, data) {
		return ProposalV4{}, nil, fmt.Errorf("%w: %s: not in canonical form", ErrCorruptProposal, key)
	}
	return d, pack, nil
}

// EntryKind classifies a key under ProposalsPrefix.
type EntryKind int

// Kinds of entries a LIST of ProposalsPrefix returns.
const (
	EntryOther    EntryKind = iota // a version-3 lead marker or group pack, or anything else
	EntryProposal                  // proposals/<G>-<id>
	EntryMarker                    // proposals/<G>-<id>.fold.<cutG>-<cutID>
	// EntryRollup and EntryCheckpoint (registered_v4.go): registered
	// descriptors, proposals/<G>-r-<blake3> and proposals/<G>-c-<blake3>.
)

const markerInfix = ".fold."

// FoldMarkerKey is the fold marker of the fold of proposal (g, id) that
// took the proposals up to (cutG, cutID).
func FoldMarkerKey(g uint64, id string, cutG uint64, cutID string) string {
	cut := strings.TrimPrefix(ProposalKey(cutG, cutID), ProposalsPrefix)
	return ProposalKey(g, id) + markerInfix + cut
}

// ParseProposalEntry classifies a listed key: a proposal (g, id), a fold
// marker (g, id, cut), a registered descriptor (its kind, g, and its
// BLAKE3 in hex as id), or other.
func ParseProposalEntry(key string) (kind EntryKind, g uint64, id string, cutG uint64, cutID string) {
	rest, ok := strings.CutPrefix(key, ProposalsPrefix)
	if !ok {
		return EntryOther, 0, "", 0, ""
	}
	if kind, g, sum, ok := parseRegistered(rest); ok {
		return kind, g, sum, 0, ""
	}
	head, tail, marker := strings.Cut(rest, markerInfix)
	g, id, ok = parseGenID(head)
	if !ok {
		return EntryOther, 0, "", 0, ""
	}
	if !marker {
		return EntryProposal, g, id, 0, ""
	}
	cutG, cutID, ok = parseGenID(tail)
	if !ok {
		return EntryOther, 0, "", 0, ""
	}
	return EntryMarker, g, id, cutG, cutID
}

// parseGenID parses <G, 20 digits>-<uuidv7>.
func parseGenID(s string) (uint64, string, bool) {
	if len(s) != 20+1+36 || s[20] != '-' {
		return 0, "", false
	}
	for i := 0; i < 20; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, "", false
		}
	}
	g, err := strconv.ParseUint(s[:20], 10, 64)
	if err != nil || !IsPublicationID(s[21:]) {
		return 0, "", false
	}
	return g, s[21:], true
}
