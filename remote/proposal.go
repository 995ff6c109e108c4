package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Version 3's registrations (docs/storage.md §4B, "What version 3 left
// under proposals/"). Binaries before format version 4 published with
// group commit: a writer that lost a race registered its proposal under
// proposals/<G>-<id> (a descriptor line, then its pack), the first to
// create proposals/<G>-lead led generation G, and the leader uploaded
// the union of its group's packs to proposals/<G>-<id>-group. This build
// writes none of them and no reader needs them: every generation a
// leader accepted names an increment at packs/increments/<g>-<id>.pack,
// which is what readers fetch. What remains here is their key grammar
// and codec, so that verify and cleanup can tell them from other
// objects, CleanProposals can remove them, and the format's fixtures
// stay tested.

// ProposalsPrefix holds the registered proposals.
const ProposalsPrefix = "proposals/"

// ProposalDescriptor describes what a version-3 writer that lost a race
// registered under ProposalKey(ParentGeneration, Publication)
// (EncodeRegistration: the descriptor, then the pack): the head it built
// on and its pack, whose key was IncrementKey(ParentGeneration+1,
// Publication) if it wrote itself.
type ProposalDescriptor struct {
	Publication      string
	ParentGeneration uint64
	Parent           cas.ID // the head of generation ParentGeneration (zero for the empty notebook)
	Head             cas.ID // the proposal's head commit, in Pack
	Pack             PackRef
}

// ProposalKey is proposals/<parentGeneration, 20 digits>-<uuidv7>.
func ProposalKey(parentGeneration uint64, publication string) string {
	return strings.TrimSuffix(packKey(ProposalsPrefix, parentGeneration, publication), packSuffix)
}

// GroupPackKey is where a version-3 writer whose publication pub led the
// group on parentGeneration put the group pack: every object of its own
// increment's pack and of its members', in one pack
// (proposals/<G>-<pub>-group). Its members' increments are in the store
// too, so no reader needs it; CleanProposals removes it.
func GroupPackKey(parentGeneration uint64, pub string) string {
	return ProposalKey(parentGeneration, pub) + groupPackSuffix
}

const groupPackSuffix = "-group"

// leadKey is the marker whose creator led the group of a generation.
func leadKey(parentGeneration uint64) string {
	return proposalPrefix(parentGeneration) + "lead"
}

func parseLeadKey(key string) (uint64, error) {
	rest, ok := strings.CutPrefix(key, ProposalsPrefix)
	if !ok || len(rest) != 25 || rest[20:] != "-lead" {
		return 0, fmt.Errorf("remote: %q is not a lead key", key)
	}
	return strconv.ParseUint(rest[:20], 10, 64)
}

// proposalPrefix lists the descriptors registered on one generation.
func proposalPrefix(parentGeneration uint64) string {
	k := ProposalKey(parentGeneration, "")
	return k
}

// parseProposalKey returns the parent generation and publication a
// descriptor key names.
func parseProposalKey(key string) (uint64, string, error) {
	rest, ok := strings.CutPrefix(key, ProposalsPrefix)
	if !ok || len(rest) < 22 || rest[20] != '-' {
		return 0, "", fmt.Errorf("remote: %q is not a proposal key", key)
	}
	g, err := strconv.ParseUint(rest[:20], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("remote: %q is not a proposal key", key)
	}
	pub := rest[21:]
	if !IsPublicationID(pub) {
		return 0, "", fmt.Errorf("remote: %q is not a proposal key", key)
	}
	return g, pub, nil
}

// descriptorJSON fixes the encoding: fields in this order, IDs in lower
// hex, no whitespace, a trailing newline.
type descriptorJSON struct {
	Version          int    `json:"version"`
	Publication      string `json:"publication"`
	ParentGeneration uint64 `json:"parentGeneration"`
	Parent           string `json:"parent"`
	Head             string `json:"head"`
	PackSum          string `json:"packSum"`
	PackSize         int64  `json:"packSize"`
}

const descriptorVersion = 1

// EncodeProposal returns the descriptor's bytes.
func EncodeProposal(d ProposalDescriptor) []byte {
	parent := ""
	if !d.Parent.IsZero() {
		parent = d.Parent.String()
	}
	data, _ := json.Marshal(descriptorJSON{
		Version: descriptorVersion, Publication: d.Publication, ParentGeneration: d.ParentGeneration,
		Parent: parent, Head: d.Head.String(), PackSum: d.Pack.Sum.String(), PackSize: d.Pack.Size,
	})
	return append(data, '\n')
}

// EncodeRegistration is what a writer registers: the descriptor
// (EncodeProposal: one line) followed by its pack. (A writer before it
// registered the descriptor alone, its pack already at d.Pack.Key.)
func EncodeRegistration(d ProposalDescriptor, pack []byte) []byte {
	return append(EncodeProposal(d), pack...)
}

// DecodeRegistration parses a registration read at key: the descriptor
// (DecodeProposal) and the pack that follows it, checked against the
// descriptor's size and BLAKE3; the pack is nil for a descriptor alone,
// as older writers registered it.
func DecodeRegistration(key string, data []byte) (ProposalDescriptor, []byte, error) {
	line := data
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line = data[:i+1]
	}
	d, err := DecodeProposal(key, line)
	if err != nil {
		return ProposalDescriptor{}, nil, err
	}
	pack := data[len(line):]
	if len(pack) == 0 {
		return d, nil, nil
	}
	if int64(len(pack)) != d.Pack.Size || cas.Sum(pack) != d.Pack.Sum {
		return ProposalDescriptor{}, nil, fmt.Errorf("remote: proposal %s: the pack does not match its descriptor", key)
	}
	return d, pack, nil
}

// DecodeProposal parses a descriptor read at key, refusing anything
// EncodeProposal would not have written for that key.
func DecodeProposal(key string, data []byte) (ProposalDescriptor, error) {
	bad := func(why string) (ProposalDescriptor, error) {
		return ProposalDescriptor{}, fmt.Errorf("remote: proposal %s: %s", key, why)
	}
	g, pub, err := parseProposalKey(key)
	if err != nil {
		return bad("bad key")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var j descriptorJSON
	if err := dec.Decode(&j); err != nil {
		return bad("not a descriptor")
	}
	d := ProposalDescriptor{Publication: j.Publication, ParentGeneration: j.ParentGeneration}
	if j.Parent != "" {
		if d.Parent, err = cas.ParseID(j.Parent); err != nil {
			return bad("bad parent")
		}
	}
	if d.Head, err = cas.ParseID(j.Head); err != nil {
		return bad("bad head")
	}
	var sum cas.ID
	if sum, err = cas.ParseID(j.PackSum); err != nil {
		return bad("bad pack sum")
	}
	d.Pack = PackRef{Key: IncrementKey(g+1, pub), Sum: sum, Size: j.PackSize}
	switch {
	case j.Version != descriptorVersion:
		return bad("unknown version")
	case j.Publication != pub || j.ParentGeneration != g:
		return bad("does not match its key")
	case j.PackSize <= 0 || d.Head.IsZero():
		return bad("no pack")
	case !bytes.Equal(EncodeProposal(d), data):
		return bad("not in canonical form")
	}
	return d, nil
}

// CleanProposals deletes the descriptors registered on generations below
// `current`'s: only a write conditional on a descriptor's own generation
// can include it, so once `current` is past it nothing can. It returns the
// keys deleted.
func (n *Notebook) CleanProposals(ctx context.Context) ([]string, error) {
	state, err := n.ReadCurrent(ctx)
	if err != nil {
		return nil, err
	}
	infos, err := n.store.List(ctx, ProposalsPrefix)
	if err != nil {
		return nil, err
	}
	var deleted []string
	for _, info := range infos {
		g, _, err := parseProposalKey(strings.TrimSuffix(info.Key, groupPackSuffix))
		if err != nil {
			g, err = parseLeadKey(info.Key)
		}
		if err != nil || g >= state.Generation() {
			continue
		}
		if err := n.store.Delete(ctx, info.Key); err != nil && !errors.Is(err, ErrNotFound) {
			return deleted, err
		}
		deleted = append(deleted, info.Key)
	}
	return deleted, nil
}
