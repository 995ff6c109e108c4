package remote

import (
	"fmt"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// Reading a version-4 store with the readers of versions 1–3. The history
// readers (catch-up, log, show, diff, restore, revert, blame, verify, the
// pending-record check) work on a *Manifest: chains of a checkpoint and
// increments, each increment naming the pack that holds what it added.
// A version-4 `current` has the same shape once each generation's objects
// are named: its proposal (the pack inside the proposal object, which
// FetchPack unwraps) and, when a fold re-parented it, its group pack
// (Increment.Group). ReadCurrent therefore returns a version-4 `current`
// as such a view: Version 4, the decoded ManifestV4 in V4, the tail as
// Increments, and the segments as listed (a segment at or above Upgraded
// is a version-4 object, decoded and converted by ReadSegment).
//
// A view is read-only: the version-3 writers (Extend, SwapCheckpoint,
// EncodeManifest, Cleanup) refuse it with ErrV4Store, since writing a
// version-3 `current` over it would drop the window of publication IDs
// that keeps version-4 acceptance exactly-once. Version 4 is written only
// by package publish.

// ErrV4Store: a version-3 write was asked of a store whose `current` is
// version 4. The engine publishes such a store with package publish.
var ErrV4Store error = noinit.Error("remote: the store's current is version 4; version-3 writes refuse it")

// ViewV4 returns the read-only view of m described above (what
// ReadCurrent returns for it).
func ViewV4(m *ManifestV4) *Manifest { return viewV4(m) }

func viewV4(m *ManifestV4) *Manifest {
	v := &Manifest{Version: ManifestV4Version, Generation: m.Generation, Head: m.Head,
		Checkpoint: m.Checkpoint, Checkpoints: m.Checkpoints, Upgraded: m.Upgraded,
		Segments: m.Segments, V4: m}
	v.Increments = make([]Increment, len(m.Increments))
	for i, inc := range m.Increments {
		v.Increments[i] = IncrementOfV4(inc)
	}
	return v
}

// IncrementOfV4 is inc as a history reader lists it: its proposal as its
// pack (no size or checksum in `current`: the proposal object checks its
// own pack, FetchPack) and its group pack, if any.
func IncrementOfV4(inc IncrementV4) Increment {
	out := Increment{Generation: inc.Generation, Publication: inc.Publication, Parent: inc.Parent,
		Head: inc.Head, Time: inc.Time, Pack: PackRef{Key: inc.ProposalKey()}, Author: inc.Author}
	if inc.Group != (GroupRef{}) {
		out.Group = PackRef{Key: inc.Group.Key(), Sum: inc.Group.Sum, Size: inc.Group.Size}
	}
	return out
}

// segmentOfV4 is a version-4 segment as a version-3 reader lists it.
func segmentOfV4(s *SegmentV4) *Segment {
	out := &Segment{Level: s.Level, First: s.First, Last: s.Last, Segments: s.Segments}
	if len(s.Increments) > 0 {
		out.Increments = make([]Increment, 0, len(s.Increments))
	}
	for _, inc := range s.Increments {
		out.Increments = append(out.Increments, IncrementOfV4(inc))
	}
	return out
}

// isProposalKey reports whether key names a proposal object (whose pack
// follows a descriptor line).
func isProposalKey(key string) bool {
	kind, _, _, _, _ := ParseProposalEntry(key)
	return kind == EntryProposal
}

// isGroupPackKey reports whether key is a version-4 group pack's key.
func isGroupPackKey(key string) bool {
	rest, ok := strings.CutPrefix(key, GroupsPrefix)
	if !ok {
		return false
	}
	hex, ok := strings.CutSuffix(rest, packSuffix)
	_, err := cas.ParseID(hex)
	return ok && err == nil
}

// unwrapProposal returns the pack of the proposal object data read at
// key, checked against its descriptor (and against ref's size and
// checksum when a reader knows them).
func unwrapProposal(ref PackRef, data []byte) ([]byte, error) {
	_, pack, err := DecodeProposalV4(ref.Key, data)
	switch {
	case err != nil:
		return nil, fmt.Errorf("remote: proposal %s named by current: %w: %w", ref.Key, ErrCorruptPack, err)
	case ref.Size != 0 && (int64(len(pack)) != ref.Size || cas.Sum(pack) != ref.Sum):
		return nil, fmt.Errorf("remote: proposal %s: %w: its pack does not match", ref.Key, ErrCorruptPack)
	}
	return pack, nil
}

// refuseView is the version-3 writers' guard.
func (m *Manifest) refuseView() error {
	if m != nil && m.V4 != nil {
		return ErrV4Store
	}
	return nil
}
