package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
)

// Cleanup of a version-4 store (docs/storage.md §5, "Cleanup of a
// version-4 store"). A version-4 store leaves three kinds of garbage
// behind, none of which a reader or a fold can ever need once it is
// decided:
//
//   - proposal versions `current` does not name (declined, superseded by
//     a newer version of the same ID, or never accepted);
//   - fold markers (only waiters read their keys, to time a fold in
//     flight);
//   - group packs no increment names: the uploads of folds whose
//     conditional write lost.
//
// The rules, with c the generation of the `current` this sweep read and
// W = K + M the protocol's window:
//
//   - A proposal version or fold marker built on G is deleted when
//     c − G ≥ W and no increment up to c names the version. A fold takes
//     a version only on a state C with C − G < K, conditionally on C's
//     ETag; C < G + K ≤ c − M < c, so that write can no longer land, and
//     every write still to come is on a state at or above c, which never
//     takes the version (invariant 8 of docs/publication.md).
//   - A group pack is deleted when the packs/groups/ LIST that saw it ran
//     before the sweep read `current`, no increment up to c names it, and
//     one of the commits inside it carries a publication ID that either an
//     increment up to c accepted without naming the pack, or that has no
//     version left undecided (none listed with c − G < W). A group pack's
//     bytes determine the state C it was folded on (each of its commits
//     has a parent chaining to C's head), and C ≤ c (its folder read C
//     before the upload, which came before the LIST), so only a write on
//     C can name it, at C+1…C+k, naming each member; it lands only while
//     `current` is C. If a member was accepted elsewhere after C,
//     `current` has moved past C; before C, the fold on C would have left
//     the ID out (it is in `recent`, and a proposer never registers a
//     version after its ID was accepted). If every version of a member
//     is decided, the one the fold took was built on some G with
//     C − G < K and G + W ≤ c, so C < c. Either way the write can never
//     land. (A version missing from the listing was deleted by an earlier
//     sweep, so it was decided then; or it lies below the floor, and the
//     sweep runs only when c ≥ floor + W.)
//
// Accepted proposal versions and named group packs are history; they stay
// until a retained checkpoint makes their generations unreachable
// (HistoryFloorV4, a hook: version-4 checkpoints do not exist yet).

// CleanupV4Options parameterises a version-4 cleanup.
type CleanupV4Options struct {
	// Window is K + M of the protocol (docs/publication.md §5.7): a
	// version built on G is decided once `current` − G ≥ Window.
	Window uint64
}

// HistoryFloorV4 is the hook for version-4 checkpoints: the generation at
// or below which no retained generation needs its accepted proposal or
// group pack any more (below the oldest retained checkpoint). Until
// version-4 checkpoints exist every generation from `upgraded` on is
// history: it returns Upgraded − 1, and nothing accepted is ever deleted.
// A cleanup reads the history above the floor only.
func HistoryFloorV4(m *ManifestV4) uint64 {
	return m.Upgraded - 1
}

// CleanupV4 deletes the decided garbage of a version-4 store (see above).
// It is a no-op on a store whose `current` is not version 4. A store
// error stops it; what was deleted stays listed in the result. Accepted
// state is never affected.
func (n *Notebook) CleanupV4(ctx context.Context, opts CleanupV4Options) (CleanupResult, error) {
	var res CleanupResult
	if opts.Window == 0 {
		return res, errors.New("remote: cleanup: no window")
	}
	// The group packs first: every one listed here was uploaded before
	// the `current` read next, so it was folded on a state at or below it.
	groups, err := n.store.List(ctx, GroupsPrefix)
	if err != nil {
		return res, fmt.Errorf("remote: cleanup: list %s: %w", GroupsPrefix, err)
	}
	data, _, err := n.store.Get(ctx, CurrentKey)
	if errors.Is(err, ErrNotFound) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("remote: cleanup: read current: %w", err)
	}
	m, _, err := DecodeCurrent(data)
	if err != nil {
		return res, fmt.Errorf("remote: cleanup: read current: %w", err)
	}
	if m == nil {
		return res, nil // versions 1–3: Cleanup's
	}
	c := m.Generation
	floor := HistoryFloorV4(m)
	if c < floor+opts.Window {
		return res, nil // nothing above the floor is decided yet
	}
	incs, err := n.historyV4(ctx, m, max(floor+1, m.Upgraded), c)
	if err != nil {
		return res, fmt.Errorf("remote: cleanup: read history: %w", err)
	}
	named := make(map[string]bool, 2*len(incs))
	byID := make(map[string]IncrementV4, len(incs))
	for _, inc := range incs {
		named[inc.ProposalKey()] = true
		if inc.Group != (GroupRef{}) {
			named[inc.Group.Key()] = true
		}
		byID[inc.Publication] = inc
	}
	del := func(key string) error {
		if err := n.store.Delete(ctx, key); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("remote: cleanup: delete %s: %w", key, err)
		}
		res.Deleted = append(res.Deleted, key)
		return nil
	}

	// Proposals and markers: only those built at or above the floor are
	// listed (S3 starts the listing there), the rest being the
	// checkpoint's to remove.
	props, err := ListAfter(ctx, n.store, ProposalsPrefix, strings.TrimSuffix(ProposalKey(floor, ""), "-"))
	if err != nil {
		return res, fmt.Errorf("remote: cleanup: list %s: %w", ProposalsPrefix, err)
	}
	// live: the IDs that have a version not yet decided (see the group
	// packs below).
	live := map[string]bool{}
	for _, o := range props {
		kind, g, id, _, _ := ParseProposalEntry(o.Key)
		if kind == EntryProposal && (c < g || c-g < opts.Window) {
			live[id] = true
		}
	}
	for _, o := range props {
		kind, g, _, _, _ := ParseProposalEntry(o.Key)
		switch {
		case kind == EntryOther:
			continue // version 3's: its own cleanup's
		case c < g || c-g < opts.Window:
			res.Kept++ // foldable, or not yet decided
			continue
		case kind == EntryProposal && named[o.Key]:
			res.Kept++ // accepted: history
			continue
		}
		if err := del(o.Key); err != nil {
			return res, err
		}
	}

	for _, o := range groups {
		if !isGroupPackKey(o.Key) || named[o.Key] {
			if named[o.Key] {
				res.Kept++
			}
			continue
		}
		orphan, err := n.lostGroupPack(ctx, o.Key, byID, live)
		if err != nil {
			return res, err
		}
		if !orphan {
			res.Kept++ // a fold in flight, or its members still undecided
			continue
		}
		if err := del(o.Key); err != nil {
			return res, err
		}
	}
	return res, nil
}

// lostGroupPack reads the group pack at key (named by no increment) and
// reports whether the write that would name it can never land: one of its
// commits carries a publication ID that an increment of byID accepted
// without naming the pack, or one that has no version still undecided
// (not in live). A pack that cannot be read as one is kept (verify
// reports it).
func (n *Notebook) lostGroupPack(ctx context.Context, key string, byID map[string]IncrementV4, live map[string]bool) (bool, error) {
	data, _, err := n.store.Get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil // deleted meanwhile
	case err != nil:
		return false, fmt.Errorf("remote: cleanup: read %s: %w", key, err)
	}
	p, err := cas.OpenPack(data)
	if err != nil {
		return false, nil
	}
	for _, id := range p.IDs() {
		o, err := p.Get(id)
		if err != nil || o.Kind != cas.KindCommit {
			continue
		}
		cm, err := cas.DecodeCommit(o)
		if err != nil {
			continue
		}
		if !IsPublicationID(cm.Publication) {
			continue
		}
		inc, ok := byID[cm.Publication]
		if ok && (inc.Group == (GroupRef{}) || inc.Group.Key() != key) || !ok && !live[cm.Publication] {
			return true, nil
		}
	}
	return false, nil
}

// historyReads bounds the concurrent segment GETs of a sweep's history
// read: over a long history it is the bulk of a sweep's requests.
const historyReads = 16

// historyV4 returns the version-4 increments of m in [from, to] (from at
// or above Upgraded), reading the segments that overlap the range one
// level at a time, each level's in parallel.
func (n *Notebook) historyV4(ctx context.Context, m *ManifestV4, from, to uint64) ([]IncrementV4, error) {
	var out []IncrementV4
	keep := func(incs []IncrementV4) {
		for _, inc := range incs {
			if inc.Generation >= from && inc.Generation <= to {
				out = append(out, inc)
			}
		}
	}
	level := m.Segments
	for len(level) > 0 {
		var refs []SegmentRef
		for _, ref := range level {
			if ref.Last >= from && ref.First <= to {
				refs = append(refs, ref)
			}
		}
		segs := make([]*SegmentV4, len(refs))
		err := parallel.For(len(refs), historyReads, func(i int) error {
			data, _, err := n.store.Get(ctx, refs[i].Key())
			if err != nil {
				return fmt.Errorf("remote: read segment %s: %w", refs[i].Key(), err)
			}
			segs[i], err = DecodeSegmentV4(refs[i], data)
			return err
		})
		if err != nil {
			return nil, err
		}
		level = nil
		for _, s := range segs {
			keep(s.Increments)
			level = append(level, s.Segments...)
		}
	}
	keep(m.Increments)
	return out, nil
}
