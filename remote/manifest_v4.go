package remote

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// Manifest version 4 (docs/publication.md §4): `current` of the
// publication protocol in which writers register proposals and one write
// accepts a whole group, each member at its own generation. It is a type
// of its own, not a Manifest: its increments name a proposal and a group
// pack instead of an increment pack, and it carries the window of recent
// publication IDs every folder checks acceptance against. The v1–v3 code
// paths do not read it; a binary that predates it refuses it by its
// version (decodeManifestV1 names the version it does not support).

// ManifestV4Version is the version field of a version-4 `current`.
const ManifestV4Version = 4

// Bounds of version 4.
const (
	// RecentWindow is how many of the newest generations `recent` names:
	// K + M of the protocol (docs/publication.md §5.4, §5.7).
	RecentWindow = 256
	// MaxDeclined bounds `declined`: writes decline only versions folded
	// in the window, and entries older than the window are dropped.
	MaxDeclined = RecentWindow
	// MaxRollupsV4 bounds `rollups`: a few per level.
	MaxRollupsV4 = 64
	// MaxAuthorBytes bounds an author name (UTF-8; empty: unknown).
	MaxAuthorBytes = 256
	// recentIDLen is one publication ID in `recent`: its 16 bytes in
	// base64url without padding.
	recentIDLen = 22
	// MaxManifestV4Bytes bounds a decoded version-4 `current`.
	MaxManifestV4Bytes = 1 << 20
)

// GroupRef names a group pack, packs/groups/<blake3>.pack: the objects a
// fold created (re-parented trees and commits, files merged three-way).
type GroupRef struct {
	Sum  cas.ID
	Size int64
}

// Key is the group pack's key.
func (g GroupRef) Key() string { return GroupPackKeyV4(g.Sum) }

// IncrementV4 is one accepted member of a version-4 write.
type IncrementV4 struct {
	Generation  uint64
	Publication string
	Parent      cas.ID // the previous generation's head (zero for the first)
	Head        cas.ID
	Time        uint64   // the proposer's clock (Unix ms)
	Proposal    uint64   // G of the accepted version: its key is ProposalKey(Proposal, Publication)
	Author      string   // who wrote it (UTF-8, at most MaxAuthorBytes; empty: unknown)
	Group       GroupRef // zero: the write needed no group pack (its proposal is its pack)
}

// ProposalKey is the key of the accepted proposal version, whose pack
// holds the objects the member's own change created.
func (i IncrementV4) ProposalKey() string { return ProposalKey(i.Proposal, i.Publication) }

// Declined is a proposal version a write left out because it did not
// merge cleanly (or was not a version-4 proposal): its proposer rebuilds.
type Declined struct {
	Proposal    uint64 // G of the version
	Publication string
	By          uint64 // the generation of the write that declined it (its first member's)
}

// RollupRef describes a rollup pack registered by a fold (catch-up uses
// it instead of guessing keys).
type RollupRef struct {
	Level int
	First uint64
	Sum   cas.ID
	Size  int64
}

// RollupPackKeyV4 is packs/rollups/<blake3, 64 hex>.pack: a rollup a
// version-4 descriptor names, keyed by its content (two builders of one
// block may write different bytes; each descriptor names its own).
func RollupPackKeyV4(sum cas.ID) string { return RollupsPrefix + sum.String() + packSuffix }

// Key is the rollup pack's key.
func (r RollupRef) Key() string { return RollupPackKeyV4(r.Sum) }

// ManifestV4 is a decoded version-4 `current`.
type ManifestV4 struct {
	Generation  uint64
	Head        cas.ID
	Time        uint64 // the folder's clock when it built the write (Unix ms)
	Store       string // the store ID
	Upgraded    uint64 // the first generation a version-4 writer wrote
	Checkpoint  Checkpoint
	Checkpoints []Checkpoint
	Segments    []SegmentRef
	Increments  []IncrementV4 // the tail, newest last, 1..MaxTail
	// Recent holds the publication IDs of generations
	// Generation-len(Recent)+1 .. Generation, oldest first:
	// min(RecentWindow, Generation-Upgraded+1) of them.
	Recent   []string
	Declined []Declined
	Rollups  []RollupRef

	// uploads: the segments UpgradeToV4 made, which the first write
	// (NextV4) returns for upload with its own.
	uploads []SegmentUpload
}

// RecentFirst is the generation of Recent[0].
func (m *ManifestV4) RecentFirst() uint64 { return m.Generation - uint64(len(m.Recent)) + 1 }

// AcceptedAt returns the generation `recent` names id at, or 0.
func (m *ManifestV4) AcceptedAt(id string) uint64 {
	if m == nil {
		return 0
	}
	for i := len(m.Recent) - 1; i >= 0; i-- {
		if m.Recent[i] == id {
			return m.RecentFirst() + uint64(i)
		}
	}
	return 0
}

// IsDeclined reports whether the version (g, id) is declined.
func (m *ManifestV4) IsDeclined(g uint64, id string) bool {
	if m == nil {
		return false
	}
	for _, d := range m.Declined {
		if d.Proposal == g && d.Publication == id {
			return true
		}
	}
	return false
}

// Increment returns the tail's increment of generation g.
func (m *ManifestV4) Increment(g uint64) (IncrementV4, bool) {
	if m == nil || len(m.Increments) == 0 {
		return IncrementV4{}, false
	}
	first := m.Increments[0].Generation
	if g < first || g > m.Generation {
		return IncrementV4{}, false
	}
	return m.Increments[g-first], true
}

// MemberV4 is one proposal a fold accepts, before it has a generation.
type MemberV4 struct {
	Publication string
	Proposal    uint64
	Head        cas.ID
	Time        uint64
	Author      string
}

// SegmentUpload is a segment object a write created: its key and bytes,
// stored before the write of `current` that lists it.
type SegmentUpload struct {
	Key  string
	Data []byte
}

// NextV4 returns the manifest that accepts members on top of m (nil: the
// empty notebook) in one write: member i at m's generation + 1 + i, each
// parented on the head before it, all naming group (zero: none); recent
// extended, declined extended with what this write declined and trimmed
// to the window, the tail folded into segments past MaxTail. at is the
// folder's clock, store the store ID. The segments the fold created are
// returned for upload before the write. m is not modified.
func NextV4(m *ManifestV4, store string, at uint64, members []MemberV4, group GroupRef, declined []Declined) (*ManifestV4, []SegmentUpload, error) {
	if len(members) == 0 {
		return nil, nil, fmt.Errorf("%w: a write accepts at least one proposal", ErrCorruptManifest)
	}
	next := &ManifestV4{Store: store, Time: at}
	if m != nil {
		next.Generation, next.Head, next.Upgraded = m.Generation, m.Head, m.Upgraded
		next.Checkpoint = m.Checkpoint
		next.Checkpoints = slices.Clone(m.Checkpoints)
		next.Segments = slices.Clone(m.Segments)
		next.Increments = slices.Clone(m.Increments)
		next.Recent = slices.Clone(m.Recent)
		next.Declined = slices.Clone(m.Declined)
		next.Rollups = slices.Clone(m.Rollups)
	}
	first := next.Generation + 1
	if next.Upgraded == 0 {
		next.Upgraded = first
	}
	for _, mb := range members {
		gen, err := NextGeneration(next.Generation)
		if err != nil {
			return nil, nil, err
		}
		next.Increments = append(next.Increments, IncrementV4{Generation: gen, Publication: mb.Publication,
			Parent: next.Head, Head: mb.Head, Time: mb.Time, Proposal: mb.Proposal, Author: mb.Author, Group: group})
		next.Generation, next.Head = gen, mb.Head
		next.Recent = append(next.Recent, mb.Publication)
	}
	if n := len(next.Recent); n > RecentWindow {
		next.Recent = next.Recent[n-RecentWindow:]
	}
	for _, d := range declined {
		d.By = first
		next.Declined = append(next.Declined, d)
	}
	// Entries declined before the window are dropped: a version that old
	// is past K anyway, and its proposer has rebuilt or decided.
	floor := next.RecentFirst()
	next.Declined = slices.DeleteFunc(next.Declined, func(d Declined) bool { return d.By < floor })
	if n := len(next.Declined); n > MaxDeclined {
		next.Declined = next.Declined[n-MaxDeclined:]
	}
	var uploads []SegmentUpload
	if m != nil {
		uploads = slices.Clone(m.uploads)
	}
	uploads = append(uploads, next.foldTail()...)
	if err := next.Validate(); err != nil {
		return nil, nil, err
	}
	return next, uploads, nil
}

// foldTail moves the oldest increments of an overlong tail into level-1
// segments of their own (index/, version-4 segment objects) and merges
// full runs of one level into the next, as version 2 does.
func (m *ManifestV4) foldTail() []SegmentUpload {
	var out []SegmentUpload
	add := func(ref SegmentRef, data []byte) {
		m.Segments = append(m.Segments, ref)
		out = append(out, SegmentUpload{Key: ref.Key(), Data: data})
	}
	for len(m.Increments) > MaxTail {
		add(encodeSegmentV4(1, m.Increments[:SegmentFanout], nil))
		m.Increments = slices.Clone(m.Increments[SegmentFanout:])
		for level := 1; level < MaxSegmentLevel; level++ {
			n := 0
			for i := len(m.Segments) - 1; i >= 0 && m.Segments[i].Level == level; i-- {
				n++
			}
			if n < SegmentFanout {
				break
			}
			at := len(m.Segments) - n
			children := slices.Clone(m.Segments[at:])
			m.Segments = m.Segments[:at]
			add(encodeSegmentV4(level+1, nil, children))
		}
	}
	return out
}

// Validate checks every rule of version 4 that `current` alone can show.
// An error wraps ErrCorruptManifest.
func (m *ManifestV4) Validate() error {
	if err := m.validate(); err != nil {
		return fmt.Errorf("%w: version 4: %w", ErrCorruptManifest, err)
	}
	return nil
}

func (m *ManifestV4) validate() error {
	switch {
	case m.Generation == 0:
		return fmt.Errorf("generation 0 is the absent manifest, never written")
	case m.Head.IsZero():
		return fmt.Errorf("head is zero")
	case !IsStoreID(m.Store):
		return fmt.Errorf("store is not a store ID")
	case m.Upgraded == 0 || m.Upgraded > m.Generation:
		return fmt.Errorf("upgraded generation %d outside 1..%d", m.Upgraded, m.Generation)
	}
	// Sized for every ID it will hold (one per checkpoint, then
	// `recent`'s), so it is not grown on every decode and encode.
	seen := make(map[string]bool, 1+len(m.Checkpoints)+len(m.Recent))
	if !m.Checkpoint.IsGenesis() {
		if err := validateCheckpoint(m.Checkpoint, seen); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if m.Checkpoint.Through >= m.Generation {
			return fmt.Errorf("the checkpoint reaches generation %d, not below generation %d", m.Checkpoint.Through, m.Generation)
		}
	} else if len(m.Checkpoints) > 0 {
		return fmt.Errorf("retained checkpoints without an active one")
	}
	if len(m.Checkpoints) > MaxRetained {
		return fmt.Errorf("%d retained checkpoints, more than %d", len(m.Checkpoints), MaxRetained)
	}
	newer := m.Checkpoint.Through
	for i, cp := range m.Checkpoints {
		if err := validateCheckpoint(cp, seen); err != nil || cp.IsGenesis() {
			return fmt.Errorf("retained checkpoint %d: %v", i, err)
		}
		if cp.Through >= newer {
			return fmt.Errorf("retained checkpoint %d is not older than the one before it", i)
		}
		newer = cp.Through
	}
	if len(m.Segments) > MaxSegments {
		return fmt.Errorf("%d segments, more than %d", len(m.Segments), MaxSegments)
	}
	var prev uint64
	for i, s := range m.Segments {
		// The segments of versions 2 and 3 (carried ones included) stay
		// listed after an upgrade; every segment a version-4 write makes
		// is an object of its own. So a carried segment is version 3's:
		// its carrier, a version-3 generation, lies below the upgrade.
		if err := validateSegmentRef(s, 3); err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
		if s.Carried() && s.Carrier >= m.Upgraded {
			return fmt.Errorf("segment %d: carried by generation %d, not below the upgrade at %d", i, s.Carrier, m.Upgraded)
		}
		if i > 0 && (s.First <= prev || s.Level > m.Segments[i-1].Level) {
			return fmt.Errorf("segment %d is out of order", i)
		}
		if s.Last >= m.Generation {
			return fmt.Errorf("segment %d reaches generation %d, the tail's", i, s.Last)
		}
		run := 1
		for j := i - 1; j >= 0 && m.Segments[j].Level == s.Level; j-- {
			run++
		}
		if run >= SegmentFanout {
			return fmt.Errorf("%d segments of level %d, not folded", run, s.Level)
		}
		prev = s.Last
	}
	if len(m.Increments) == 0 || len(m.Increments) > MaxTail {
		return fmt.Errorf("%d increments in the tail, want 1..%d", len(m.Increments), MaxTail)
	}
	for i, inc := range m.Increments {
		if err := validateIncrementV4(inc); err != nil {
			return fmt.Errorf("increment %d: %w", i, err)
		}
		if inc.Generation < m.Upgraded {
			return fmt.Errorf("increment %d: generation %d before the upgrade at %d", i, inc.Generation, m.Upgraded)
		}
		// From the upgrade on every generation is one accepted member, so
		// the tail is consecutive.
		if i > 0 && (inc.Generation != m.Increments[i-1].Generation+1 || inc.Parent != m.Increments[i-1].Head) {
			return fmt.Errorf("increment %d does not follow the previous one", i)
		}
		if i == 0 && inc.Generation <= prev && len(m.Segments) > 0 {
			return fmt.Errorf("increment 0: generation %d does not follow the segments", inc.Generation)
		}
	}
	last := m.Increments[len(m.Increments)-1]
	if last.Generation != m.Generation || last.Head != m.Head {
		return fmt.Errorf("the newest increment is not generation %d at head", m.Generation)
	}
	if want := min(RecentWindow, m.Generation-m.Upgraded+1); uint64(len(m.Recent)) != want {
		return fmt.Errorf("recent names %d publications, want %d", len(m.Recent), want)
	}
	// seen holds the checkpoints' publication IDs: `recent` (which holds
	// the tail's, below) names none of them, nor any ID twice.
	for i, id := range m.Recent {
		if !IsPublicationID(id) {
			return fmt.Errorf("recent %d is not a UUIDv7", i)
		}
		if seen[id] {
			return fmt.Errorf("recent names %s twice, or a checkpoint's", id)
		}
		seen[id] = true
	}
	off := len(m.Recent) - len(m.Increments)
	for i, inc := range m.Increments {
		if j := off + i; j >= 0 && m.Recent[j] != inc.Publication {
			return fmt.Errorf("recent disagrees with increment %d", i)
		}
	}
	if len(m.Declined) > MaxDeclined {
		return fmt.Errorf("%d declined versions, more than %d", len(m.Declined), MaxDeclined)
	}
	var by uint64
	declined := make(map[Declined]bool, len(m.Declined))
	for i, d := range m.Declined {
		switch {
		case !IsPublicationID(d.Publication):
			return fmt.Errorf("declined %d: publication is not a UUIDv7", i)
		case d.By <= d.Proposal || d.By > m.Generation || d.By < m.RecentFirst():
			return fmt.Errorf("declined %d: by generation %d outside the window", i, d.By)
		case d.By < by:
			return fmt.Errorf("declined %d is out of order", i)
		}
		// One version is declined once: a later write never takes it up
		// again (pending skips it), so a second entry is damage.
		key := Declined{Proposal: d.Proposal, Publication: d.Publication}
		if declined[key] {
			return fmt.Errorf("declined %d names version %d of %s again", i, d.Proposal, d.Publication)
		}
		declined[key] = true
		by = d.By
	}
	if len(m.Rollups) > MaxRollupsV4 {
		return fmt.Errorf("%d rollups, more than %d", len(m.Rollups), MaxRollupsV4)
	}
	for i, r := range m.Rollups {
		if err := r.validate(m.Generation); err != nil {
			return fmt.Errorf("rollup %d: %w", i, err)
		}
		// Largest blocks first (a catch-up plan's order), then by first
		// generation: one order, so one encoding, and no block twice.
		if i > 0 {
			p := m.Rollups[i-1]
			if r.Level > p.Level || r.Level == p.Level && r.First <= p.First {
				return fmt.Errorf("rollup %d is out of order or repeats a block", i)
			}
		}
	}
	return nil
}

// validate checks a rollup descriptor's own fields: a level that exists
// (MinRollupLevel..MaxRollupLevel), a first generation on that level's
// block boundary, a block that ends by generation (a rollup is built
// once its block's end is accepted), a pack's size and checksum.
func (r RollupRef) validate(generation uint64) error {
	switch {
	case r.Level < MinRollupLevel || r.Level > MaxRollupLevel:
		return fmt.Errorf("level %d outside %d..%d", r.Level, MinRollupLevel, MaxRollupLevel)
	case r.First == 0 || (r.First-1)%(1<<r.Level) != 0:
		return fmt.Errorf("first generation %d is not the start of a level-%d block", r.First, r.Level)
	case r.First > generation || generation-(r.First-1) < 1<<r.Level:
		return fmt.Errorf("the block from %d ends after generation %d", r.First, generation)
	case r.Size <= 0 || r.Size > MaxPackSize || r.Sum.IsZero():
		return fmt.Errorf("pack size %d or checksum is malformed", r.Size)
	}
	return nil
}

// validateIncrementV4 checks one increment's own fields (not its place).
func validateIncrementV4(inc IncrementV4) error {
	switch {
	case inc.Generation == 0:
		return fmt.Errorf("generation 0")
	case inc.Head.IsZero() || inc.Head == inc.Parent:
		return fmt.Errorf("head is zero or equals its parent")
	case !IsPublicationID(inc.Publication):
		return fmt.Errorf("publication is not a UUIDv7")
	case inc.Proposal >= inc.Generation:
		return fmt.Errorf("proposal built on generation %d, not before %d", inc.Proposal, inc.Generation)
	case inc.Group != GroupRef{} && (inc.Group.Sum.IsZero() || inc.Group.Size <= 0 || inc.Group.Size > MaxPackSize):
		return fmt.Errorf("group pack is malformed")
	}
	return checkAuthor(inc.Author)
}

// checkAuthor: valid UTF-8, at most MaxAuthorBytes.
func checkAuthor(a string) error {
	if len(a) > MaxAuthorBytes || !utf8.ValidString(a) {
		return fmt.Errorf("author is not UTF-8 of at most %d bytes", MaxAuthorBytes)
	}
	return nil
}

// encodeRecent writes ids (canonical UUIDv7 strings) as one string of
// 22-character base64url IDs.
func encodeRecent(b []byte, ids []string) []byte {
	for _, id := range ids {
		var raw [16]byte
		uuidBytes(id, &raw)
		b = base64.RawURLEncoding.AppendEncode(b, raw[:])
	}
	return b
}

// uuidBytes decodes a canonical UUID string (validated) into raw.
func uuidBytes(id string, raw *[16]byte) {
	var h [32]byte
	j := 0
	for i := 0; i < len(id) && j < len(h); i++ {
		if id[i] != '-' {
			h[j] = id[i]
			j++
		}
	}
	_, _ = hex.Decode(raw[:], h[:])
}

// strictB64 is base64url without padding, refusing non-canonical
// encodings; made on first use (Strict allocates a copy of the encoding).
func strictB64() *base64.Encoding {
	return strictB64Once.Get(func() *base64.Encoding { return base64.RawURLEncoding.Strict() })
}

var strictB64Once noinit.Lazy[*base64.Encoding]

// decodeRecent splits s into its IDs, each a canonical UUIDv7.
func decodeRecent(s []byte) ([]string, error) {
	if len(s)%recentIDLen != 0 || len(s) > RecentWindow*recentIDLen {
		return nil, fmt.Errorf("recent is %d characters, not a whole number of IDs up to %d", len(s), RecentWindow)
	}
	// The IDs are formatted side by side into one string and sliced from
	// it: one allocation for the window, not one per ID.
	n := len(s) / recentIDLen
	var text strings.Builder
	text.Grow(n * uuidLen)
	var raw [16]byte
	var id [uuidLen]byte
	for i := range n {
		k, err := strictB64().Decode(raw[:], s[i*recentIDLen:(i+1)*recentIDLen])
		if err != nil || k != 16 {
			return nil, fmt.Errorf("recent %d is not base64url", i)
		}
		// putUUID writes lowercase hex and the dashes, so the text is a
		// publication ID (IsPublicationID) exactly when the raw bytes hold
		// version 7 and the RFC 9562 variant.
		if raw[6]>>4 != 7 || raw[8]>>6 != 2 {
			return nil, fmt.Errorf("recent %d is not a UUIDv7", i)
		}
		putUUID(id[:], raw)
		text.Write(id[:])
	}
	all := text.String()
	out := make([]string, n)
	for i := range out {
		out[i] = all[i*uuidLen : (i+1)*uuidLen]
	}
	return out, nil
}

// uuidLen is the length of a UUID's canonical text.
const uuidLen = 36
