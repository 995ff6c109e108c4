package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
)

// Cleanup of a version-4 store (docs/storage.md §5, "Cleanup of a
// version-4 store"). A version-4 store leaves five kinds of garbage
// behind, none of which a reader or a fold can ever need once it is
// decided:
//
//   - proposal versions `current` does not name (declined, superseded by
//     a newer version of the same ID, or never accepted);
//   - fold markers (only waiters read their keys, to time a fold in
//     flight);
//   - group packs no increment names: the uploads of folds whose
//     conditional write lost;
//   - segments `current` does not reach: the same folds' uploads, when
//     their members reached into a segment (otherwise the winner makes
//     the same bytes);
//   - rollup packs no registration a fold may take names: builders that
//     stopped before registering, and the packs of registrations that
//     go (duplicates, blocks the per-level bound dropped, registrations
//     that came after their block was superseded).
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
//   - A version-4 segment ending at L that the segments `current` lists
//     do not reach is deleted when c − L ≥ W and c − L > MaxTail. Only a
//     fold writes one, before its conditional write; a fold on C makes
//     segments of its tail (at most MaxTail increments, from C − 14 on)
//     and its members, each ending at or after the level-1 segment made
//     with it, which holds 8 consecutive generations: so C ≤ L + 7 < c,
//     and the write never lands. Writes to come, on states at or above c,
//     make segments ending at c − 7 or later and merge only segments
//     `current` lists. A segment a `current` listed stays reachable from
//     every later one (merged segments list their children) until the
//     history floor passes it: no reader reads one `current` does not
//     reach.
//   - A version-4 rollup pack that `current` does not list and no
//     registration above the active checkpoint names is deleted when its
//     block ends at or below S, the newest checkpoint `current` lists
//     with S + 2W ≤ c (SettledCheckpointV4). Its end is the G of the
//     registration deleted now, or the latest generation read whose
//     publication ID one of its commits carries (a rollup holds its
//     block's head commits; the LIST came before the read of `current`,
//     and every generation above the floor was read, so none found means
//     at or below the floor). A fold lists a rollup only through a
//     registration whose block ends above its active checkpoint, at or
//     above S from c on; a `current` lists only blocks that start above
//     its active checkpoint, and every `current` from c − W + 1 on had S
//     or a later one active (the fold that made S active copied it from
//     the LIST of its window, on a state less than K past S). So no
//     reader that planned from a `current` of the window meets it gone.
//
// Accepted proposal versions, named group packs, version-4 segments,
// rollups, checkpoints and registrations are history: they go once they
// lie at or below the history floor (retain_v4.go, docs/storage.md §5.1
// "Retention"); registrations at or below the active checkpoint go
// whatever the floor, their rollup packs by the rule above.

// CleanupV4Options parameterises a version-4 cleanup.
type CleanupV4Options struct {
	// Window is K + M of the protocol (docs/publication.md §5.7): a
	// version built on G is decided once `current` − G ≥ Window.
	Window uint64
	// RetainFor is the retention window by time (--retain): no history
	// is deleted while a generation at or below the floor was accepted
	// (by its proposer's clock) less than RetainFor ago. Zero: history
	// goes with its checkpoints.
	RetainFor time.Duration
}

// CleanupV4 deletes the decided garbage of a version-4 store (see above)
// and the history below its floor (HistoryFloorV4). It is a no-op on a
// store whose `current` is not version 4. A store error stops it; what
// was deleted stays listed in the result. Accepted state is never
// affected.
func (n *Notebook) CleanupV4(ctx context.Context, opts CleanupV4Options) (CleanupResult, error) {
	var res CleanupResult
	if opts.Window == 0 {
		return res, errors.New("remote: cleanup: no window")
	}
	// The group packs, segments and rollups first: every one listed here
	// was uploaded before the `current` read next, so it was folded on a
	// state at or below it, or built from one.
	var listed [3][]ObjectInfo
	for i, prefix := range []string{GroupsPrefix, SegmentsPrefix, RollupsPrefix} {
		objs, err := n.store.List(ctx, prefix)
		if err != nil {
			return res, fmt.Errorf("remote: cleanup: list %s: %w", prefix, err)
		}
		listed[i] = objs
	}
	groups, segments, rollups := listed[0], listed[1], listed[2]
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
	c, base := m.Generation, m.Upgraded-1
	if c < base+opts.Window {
		return res, nil // nothing is decided yet
	}
	floor := HistoryFloorV4(m, opts.Window)
	hfloor := floor // the floor the history was read with
	// The history from the upgrade on: below the floor only what earlier
	// sweeps left (a segment is deleted after what it indexes, so one
	// they deleted is skipped).
	incs, read, err := n.historyV4(ctx, m, m.Upgraded, c, floor)
	if err != nil {
		return res, fmt.Errorf("remote: cleanup: read history: %w", err)
	}
	if floor > base && !outsideWindow(incs, floor, opts.RetainFor, n.opts.Now()) {
		floor = base // a publication at or below it is still in the window
	}
	named := make(map[string]bool, 2*len(incs)) // what generations above the floor name
	byID := make(map[string]IncrementV4, len(incs))
	genOf := make(map[string]uint64, len(incs)) // every generation read, by publication ID
	var below []IncrementV4
	for _, inc := range incs {
		genOf[inc.Publication] = inc.Generation
		if inc.Generation <= floor {
			below = append(below, inc)
			continue
		}
		named[inc.ProposalKey()] = true
		if inc.Group != (GroupRef{}) {
			named[inc.Group.Key()] = true
		}
		byID[inc.Publication] = inc
	}
	gone := map[string]bool{}
	del := func(key string) error {
		if err := n.store.Delete(ctx, key); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("remote: cleanup: delete %s: %w", key, err)
		}
		gone[key] = true
		res.Deleted = append(res.Deleted, key)
		return nil
	}

	// The history below the floor, oldest first, so that the proposal of
	// the first version-4 generation goes first: readers take its
	// absence as the sign that the history below the oldest listed
	// checkpoint is gone (SweptV4).
	for _, inc := range below {
		keys := []string{inc.ProposalKey()}
		if inc.Group != (GroupRef{}) {
			keys = append(keys, inc.Group.Key())
		}
		for _, key := range keys {
			if named[key] || gone[key] {
				continue // a group pack a member above the floor names
			}
			if err := del(key); err != nil {
				return res, err
			}
		}
	}
	if floor > base {
		// The version-4 segments that index only generations below it,
		// each after the segments it lists (read returns parents first).
		for i := len(read) - 1; i >= 0; i-- {
			if ref := read[i]; ref.Last >= m.Upgraded && ref.Last <= floor {
				if err := del(ref.Key()); err != nil {
					return res, err
				}
			}
		}
		if err := n.sweepCheckpointsV4(ctx, m, del); err != nil {
			return res, err
		}
	}

	// Proposals, markers and registrations: only those built at or above
	// the upgrade are listed (S3 starts the listing there).
	props, err := ListAfter(ctx, n.store, ProposalsPrefix, strings.TrimSuffix(ProposalKey(base, ""), "-"))
	if err != nil {
		return res, fmt.Errorf("remote: cleanup: list %s: %w", ProposalsPrefix, err)
	}
	// live: the IDs that have a version not yet decided (see the group
	// packs below).
	live := map[string]bool{}
	// registered: the rollup registrations a fold may still take, by
	// key, and the generations they end blocks at.
	registered, regEnds := map[string]bool{}, map[uint64]bool{}
	ends := map[string]uint64{} // rollup packs whose registrations go now: their blocks' ends
	for _, o := range props {
		kind, g, id, _, _ := ParseProposalEntry(o.Key)
		if kind == EntryProposal && (c < g || c-g < opts.Window) {
			live[id] = true
		}
		if kind == EntryRollup && g > m.Checkpoint.Through {
			registered[o.Key], regEnds[g] = true, true
		}
	}
	for _, o := range props {
		kind, g, _, _, _ := ParseProposalEntry(o.Key)
		switch {
		case kind == EntryOther || gone[o.Key]:
			continue // version 3's: its own cleanup's; or deleted above
		case kind == EntryRollup || kind == EntryCheckpoint:
			// A registration: no fold takes one at or below the active
			// checkpoint; a rollup's pack goes with it.
			if g > m.Checkpoint.Through {
				res.Kept++
				continue
			}
			if err := n.sweepRegistered(ctx, o.Key, kind, ends, del); err != nil {
				return res, err
			}
			continue
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
		if !isGroupPackKey(o.Key) || named[o.Key] || gone[o.Key] {
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

	// Segments no fold's write can list any more (rule 5): the history's
	// are all in read, which holds every version-4 segment `current`
	// reaches.
	reached := make(map[string]bool, len(read))
	for _, ref := range read {
		reached[ref.Key()] = true
	}
	for _, o := range segments {
		_, _, last, _, err := ParseSegmentKey(o.Key)
		switch {
		case err != nil || last < m.Upgraded || reached[o.Key] || gone[o.Key]:
			continue // not a version-4 segment, or `current` reaches it
		case last > c || c-last < opts.Window || c-last <= MaxTail:
			// A fold on a state at or above c may still list it (a fold
			// of many members folds some of them: last above c).
			res.Kept++
			continue
		}
		if err := del(o.Key); err != nil {
			return res, err
		}
	}

	// Rollup packs `current` does not list and no registration a fold
	// may take names (rule 6): deleted once their block ends at or below
	// a checkpoint every `current` of the window had active.
	settled := SettledCheckpointV4(m, opts.Window)
	inList := map[string]bool{}
	for _, r := range m.Rollups {
		inList[r.Key()] = true
	}
	for _, o := range rollups {
		sum, ok := rollupPackSum(o.Key)
		end, known := ends[o.Key]
		switch {
		case !ok || gone[o.Key]:
			continue // version 3's (keyed by its block), or deleted above
		case inList[o.Key] || !known && registeredRollup(sum, o.Size, regEnds, registered):
			res.Kept++
			continue
		case !known:
			var commits bool
			end, commits, err = n.rollupEnd(ctx, o.Key, genOf)
			if err != nil {
				return res, err
			}
			if end == 0 && commits && hfloor > base {
				// No commit of a generation read: every generation above
				// the floor the history was read with was read, so its
				// block ends at or below that floor.
				end = hfloor
			} else if end == 0 {
				res.Kept++ // no rollup a version-4 builder made: verify reports it
				continue
			}
		}
		if end > settled {
			res.Kept++ // a fold may still list it, or a reader of the window plan it
			continue
		}
		if err := del(o.Key); err != nil {
			return res, err
		}
	}
	return res, nil
}

// rollupPackSum returns the BLAKE3 a version-4 rollup pack key names
// (packs/rollups/<blake3>.pack); ok is false for any other key, version
// 2's and 3's (keyed by their blocks) included.
func rollupPackSum(key string) (cas.ID, bool) {
	rest, ok := strings.CutPrefix(key, RollupsPrefix)
	rest, ok2 := strings.CutSuffix(rest, packSuffix)
	if !ok || !ok2 {
		return cas.ID{}, false
	}
	sum, err := cas.ParseID(rest)
	return sum, err == nil && RollupPackKeyV4(sum) == key
}

// registeredRollup reports whether the rollup pack with BLAKE3 sum and
// size bytes is named by one of the registrations in registered (their
// keys), whose blocks end at the generations of ends, without reading
// any: a registration's key is the BLAKE3 of its bytes, which the block,
// the pack's BLAKE3 and its size determine, so the sweep computes the key
// that would register the pack for each block that ends at one of ends
// and looks it up.
func registeredRollup(sum cas.ID, size int64, ends map[uint64]bool, registered map[string]bool) bool {
	for g := range ends {
		for _, l := range RollupsEndingAt(g) {
			r := Registered{Kind: EntryRollup, Rollup: RollupRef{Level: l, First: g - 1<<l + 1, Sum: sum, Size: size}}
			if registered[RegisteredKey(EntryRollup, g, cas.Sum(encodeRegistered(r)))] {
				return true
			}
		}
	}
	return false
}

// rollupEnd reads the rollup pack at key and returns the generation its
// block ends at, as far as genOf (the generations the sweep read, by
// publication ID) tells: the latest generation whose publication ID one
// of its commits carries, since a rollup holds the head commits of its
// block's generations; 0 when none does. commits reports whether it
// holds a commit with a publication ID at all; a pack that is gone or
// cannot be read as one has none.
func (n *Notebook) rollupEnd(ctx context.Context, key string, genOf map[string]uint64) (end uint64, commits bool, err error) {
	data, _, err := n.store.Get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		return 0, false, nil // deleted meanwhile
	case err != nil:
		return 0, false, fmt.Errorf("remote: cleanup: read %s: %w", key, err)
	}
	p, err := cas.OpenPack(data)
	if err != nil {
		return 0, false, nil
	}
	for _, id := range p.IDs() {
		o, err := p.Get(id)
		if err != nil || o.Kind != cas.KindCommit {
			continue
		}
		cm, err := cas.DecodeCommit(o)
		if err != nil || !IsPublicationID(cm.Publication) {
			continue
		}
		commits = true
		end = max(end, genOf[cm.Publication])
	}
	return end, commits, nil
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
// level at a time, each level's in parallel. A segment that lies wholly
// at or below floor and is gone was deleted by a sweep, after everything
// it indexes: it is skipped.
// It also returns the segments it read, parents before their children.
func (n *Notebook) historyV4(ctx context.Context, m *ManifestV4, from, to, floor uint64) ([]IncrementV4, []SegmentRef, error) {
	var out []IncrementV4
	var read []SegmentRef
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
			if errors.Is(err, ErrNotFound) && refs[i].Last <= floor {
				return nil
			}
			if err != nil {
				return fmt.Errorf("remote: read segment %s: %w", refs[i].Key(), err)
			}
			segs[i], err = DecodeSegmentV4(refs[i], data)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		level = nil
		for i, s := range segs {
			if s == nil {
				continue // swept
			}
			read = append(read, refs[i])
			keep(s.Increments)
			level = append(level, s.Segments...)
		}
	}
	keep(m.Increments)
	// Oldest first: a level's segments hold older generations than the
	// lower levels listed after them.
	slices.SortFunc(out, func(a, b IncrementV4) int { return cmpUint(a.Generation, b.Generation) })
	return out, read, nil
}
