package remote

import (
	"context"
	"errors"
	"fmt"
)

// The upgrade of a version-1, -2 or -3 store to version 4
// (docs/publication.md §9, docs/storage.md §3C.7). There is no write of
// its own: the first version-4 write, the fold of a group on the old
// `current`, is the upgrade, conditional on that `current`'s ETag like
// every write. A version-3 writer that wins first moves `current`, and
// the version-4 writer reads it again and upgrades on top; once the
// version-4 `current` is written, a version-3 binary refuses it by its
// version (FormatVersionError) and publishes nothing over it.
//
// What carries over: generation, head, the active and retained
// checkpoints, and every segment as it was (version 2 and 3 objects,
// carried ones included). The old tail cannot stay a tail (a version-4
// increment names a proposal, not an increment pack), so it moves into
// version-3 segments of their own (one per 8 increments, the last one
// shorter), PUT before the write like any fold's; full runs of one level
// merge into the next as always. So every retained generation stays
// readable from the version-4 `current`: a segment that ends below
// `upgraded` is version 2's or 3's and is read with their rules, one that
// ends at or above it is version 4's.
//
// `recent` starts empty: `upgraded` is the first generation of the first
// version-4 write, and `recent` names the generations from it on. Older
// IDs could not be listed there (it is positional, one ID per generation,
// and a version-3 checkpoint swap advanced the generation without one),
// and they need not be: invariant 3 of docs/publication.md §6 asks that
// `recent` name every generation that could have accepted a version-4
// proposal, and only version-4 writes accept those (a version-3 writer's
// registration decoder refuses them; a version-4 folder declines a
// version-3 registration as foreign).

// UpgradeToV4 returns the base the first version-4 write is built on
// from m, a decoded `current` of version 1, 2 or 3: m's generation, head,
// checkpoints and segments, its tail moved into segments, `upgraded` the
// next generation, no tail and an empty window. It is not a `current` on
// its own (a version-4 `current` has a tail): pass it to NextV4, whose
// write accepts the first members and returns the segments made here for
// upload with its own. store is the store ID.
func UpgradeToV4(m *Manifest, store string) (*ManifestV4, error) {
	if m == nil || m.Generation == 0 {
		return nil, fmt.Errorf("%w: nothing to upgrade", ErrCorruptManifest)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	old, err := m.upgrade() // version 1: every chain's increments in the tail
	if err != nil {
		return nil, err
	}
	upgraded, err := NextGeneration(m.Generation)
	if err != nil {
		return nil, err
	}
	base := &ManifestV4{Generation: m.Generation, Head: m.Head, Store: store, Upgraded: upgraded,
		Checkpoint: old.Checkpoint, Checkpoints: old.Checkpoints, Segments: old.Segments}
	for i := 0; i < len(old.Increments); i += SegmentFanout {
		base.addOldSegment(encodeSegment(1, old.Increments[i:min(i+SegmentFanout, len(old.Increments))], nil, Increment{}))
	}
	return base, nil
}

// addOldSegment lists a version-3 segment the upgrade made and merges
// full runs of one level into the next (version-3 segments too: every
// child is below the upgrade).
func (m *ManifestV4) addOldSegment(b segmentBlob) {
	m.Segments = append(m.Segments, b.ref)
	m.uploads = append(m.uploads, SegmentUpload{Key: b.ref.Key(), Data: b.data})
	level := b.ref.Level
	n := 0
	for i := len(m.Segments) - 1; i >= 0 && m.Segments[i].Level == level; i-- {
		n++
	}
	if n < SegmentFanout || level >= MaxSegmentLevel {
		return
	}
	at := len(m.Segments) - n
	children := append([]SegmentRef(nil), m.Segments[at:]...)
	m.Segments = m.Segments[:at]
	m.addOldSegment(encodeSegment(level+1, nil, children, Increment{}))
}

// DecodeCurrent decodes `current` of any version this build reads:
// version 4 (old is nil) or versions 1–3 (v4 is nil; UpgradeToV4 makes
// the base of the first version-4 write on it). A version-4 `current`
// not in canonical form is ErrCorruptManifest; a version above 4 is a
// *FormatVersionError naming it.
func DecodeCurrent(data []byte) (v4 *ManifestV4, old *Manifest, err error) {
	if ManifestVersionOf(data) == ManifestV4Version {
		v4, err = DecodeManifestV4(data)
		return v4, nil, err
	}
	old, err = DecodeManifest(data)
	var fv *FormatVersionError
	if errors.As(err, &fv) {
		if fv.Version == ManifestV4Version {
			// Version 4 in another field order: never written so.
			return nil, nil, fmt.Errorf("%w: version 4: not in canonical form", ErrCorruptManifest)
		}
		return nil, nil, &FormatVersionError{Version: fv.Version, Newest: ManifestV4Version}
	}
	return nil, old, err
}

// Publications returns the retained publications of m whose generation
// lies in [from, to], oldest first: those before `upgraded` as version
// 1–3 increments (old, each naming its increment pack), those from it on
// as version-4 increments. It reads the segments that overlap the range,
// each with the rules of its version (docs/storage.md §3C.7), from store.
func (m *ManifestV4) Publications(ctx context.Context, store Store, from, to uint64) (old []Increment, v4 []IncrementV4, err error) {
	var walk func(refs []SegmentRef) error
	walk = func(refs []SegmentRef) error {
		for _, ref := range refs {
			if ref.Last < from || ref.First > to {
				continue
			}
			data, _, err := store.Get(ctx, ref.Key())
			switch {
			case errors.Is(err, ErrNotFound):
				return fmt.Errorf("remote: segment %s named by current: %w: %w", ref.Key(), ErrMissingPack, err)
			case err != nil:
				return fmt.Errorf("remote: read segment %s: %w", ref.Key(), err)
			}
			var children []SegmentRef
			if ref.Last < m.Upgraded {
				s, err := decodeSegmentIn(ref, data)
				if err != nil {
					return err
				}
				for _, inc := range s.Increments {
					if inc.Generation >= from && inc.Generation <= to {
						old = append(old, inc)
					}
				}
				children = s.Segments
			} else {
				s, err := DecodeSegmentV4(ref, data)
				if err != nil {
					return err
				}
				for _, inc := range s.Increments {
					if inc.Generation >= from && inc.Generation <= to {
						v4 = append(v4, inc)
					}
				}
				children = s.Segments
			}
			if err := walk(children); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(m.Segments); err != nil {
		return nil, nil, err
	}
	for _, inc := range m.Increments {
		if inc.Generation >= from && inc.Generation <= to {
			v4 = append(v4, inc)
		}
	}
	return old, v4, nil
}
