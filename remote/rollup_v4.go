package remote

import (
	"context"
	"fmt"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Rollups of format version 4 (docs/storage.md §3C.8). The blocks are
// version 2's (§3A.6: level L covers (j·2^L, (j+1)·2^L], L 2..10) but for
// the blocks that start at generation 1, which are never built: a first
// block would hold the whole notebook again at every level. A rollup
// holds what the head at its block's end reaches that the head at the
// block's start does not (buildRollup's side-by-side walk), so an object
// is in at most one rollup of a level. Its pack is content-keyed
// (RollupPackKeyV4) and reaches `current` by a registered descriptor; a
// reader plans from `current`'s rollups list (PlanCatchUpV4), never by
// guessing keys.
//
// The catch-up bound. With c the active checkpoint's through and G the
// head, a reader that holds generation s catches up k = G − s
// generations in at most 2·log2(k) + 4 requests, `current` included
// (invariant 12 of docs/publication.md), counting one GET per rollup,
// one per generation taken alone (its proposal), and the segments read
// to find generations below the tail. A group pack is one GET more, for
// the generations of one write together; if every generation taken
// alone had its own, a plan could exceed the bound by 2. Three rules
// make it hold:
//
//   - Built: of the blocks that end at one generation and start at or
//     after c and after generation 0, the largest, and a smaller one only
//     where a checkpoint may still land in the first half of the block
//     one level above it (RollupLevelsBuiltV4, BuildRollupsV4; a builder
//     registers it, the next fold that LISTs copies it).
//   - Listed (ManifestV4.AddRegistered): per level the newest block
//     (NewestRollupsV4) and the climb block from c (climbFirstV4): at
//     most 2 per level, 18 in all.
//   - Planned (PlanCatchUpV4): from each position p, the listed block of
//     the largest level that holds p+1 and ends by G, though it may start
//     before p; else p+1 alone.
//
// Why only the largest block that ends at a generation is built. Blocks
// of levels a < b that end at e are both the newest of their levels
// while either is (e is then the last multiple of 2^a and of 2^b), and
// neither is a climb block but the largest (a climb block's end is not a
// multiple of twice its size, or its start would have been passed by a
// larger block of the climb). So wherever the smaller one would be
// listed, the larger one is listed too, and a plan that could take the
// smaller takes the larger, which holds the same next generation and ends
// at e as well: the smaller block is never read. It is needed only once
// the larger one is dropped, by a checkpoint that becomes active at some
// t in (e − 2^(a+1), e − 2^a]: the climb from t then takes (e − 2^a, e].
// Checkpoints are due every packs generations past the active one
// (CheckpointDueV4), so the builder knows where one may still land,
// however late its descriptor is copied, and builds that block too. With
// the default interval and checkpoints at multiples of 1,024 that is
// never: a climb from there is one level-10 block. So about half the
// blocks are not built (49 rollups after 200 commits instead of 91: the
// store-size row of docs/benchmarks.md), and no plan costs more.
//
// Why a block that starts before p can be applied: a rollup's trees are
// deltas of the trees at its block's start, and a reader at p holds the
// closure of ⌊p/2^a⌋·2^a for every level a whose block is listed. By
// induction over its catch-ups: a plan is made of aligned blocks and
// single generations, so it stops at every multiple of 2^a it crosses (a
// block that crossed one would not be aligned), and a multiple not
// crossed lies at or before its start, where the induction holds; a
// reader that starts from a checkpoint holds c, and no block that starts
// before c is listed. A reader whose cache lacks the bases anyway (a
// cache pruned, another process's reach) takes the block's generations
// instead: slower, never wrong.
//
// Why the plan is short. If the plan takes a block of level a ending at
// e and then one of a larger level b, that block starts at e: a level-b
// block that started before e would hold the level-a block, so the plan
// would have taken it first. After a smaller block, ending at e + 2^b
// with e a multiple of 2^a > 2^b, no block starts there above level b.
// So a plan climbs (levels rising, each block starting where the last
// ended, the first one possibly earlier), then descends (levels
// falling): at most one block per level each way below level 10. It
// takes generations alone only below 4 (no block but first blocks holds
// 1..4) and after the newest listed block of level 2, which the tail
// holds. Every block it needs is listed: the descent's blocks end at G
// with the low bits cleared, the newest of their levels; the first block
// of the climb holds s+1 and is the newest of its level when the newest
// blocks of the levels cover s (their starts fall by one block per level
// up to the newest block of level 10), and otherwise s lies between c
// and the start of the oldest such block, which is where the climb from
// c passes (it passes every smallest multiple of 2^a at or after c). A
// plan of h climbing and d descending blocks and r generations alone
// covers k ≥ 1 + (8 + … + 2^(h+1)) + (4 + … + 2^(d+1)) + r, so its
// 1 + h + d + r requests (one more for a checkpoint's pack when s < c,
// where k > G − c) stay within 2·log2(k) + 4. TestCatchUpPlanBound
// checks every start up to 2,100 generations, across checkpoints, with
// `current` as folds make it (each block copied by the write after its
// end, the earliest a fold can). Three cases fall outside: a reader in
// the first four generations of a notebook with no checkpoint yet takes
// them one by one and reads the segments that index them, up to 2
// requests more (10 if each had its own group pack); blocks not copied
// yet (their builder still running, or no fold has listed since) leave
// their generations to be taken one by one; and a host keeps one object
// cache per checkpoint, so its first catch-up after a new checkpoint
// became active starts from that checkpoint (s taken as c, one GET more
// for its pack) even when it held a later generation.

// RollupLevelsV4 lists the levels of the blocks a version-4 builder
// builds once generation g is accepted while the genesis is the active
// checkpoint (RollupLevelsBuiltV4 with c = 0 and the default interval):
// the largest block that ends at g, never one that starts at generation
// 1. It is empty exactly when no block a builder could build ends at g,
// whatever the active checkpoint.
func RollupLevelsV4(g uint64) []int {
	return RollupLevelsBuiltV4(0, g, DefaultCheckpointPacks)
}

// RollupLevelsBuiltV4 lists, in increasing order, the levels of the
// blocks a version-4 builder builds once generation g is accepted, with
// the active checkpoint through c and a checkpoint due every packs
// generations past it: of the blocks that end at g and start after
// generation 0 and at or after c, the largest; and a smaller one, of
// level a, only when a checkpoint may land at some t in
// (g − 2^(a+1), g − 2^a], t − c a multiple of packs: once active it
// drops the larger blocks that end at g, and the climb from t takes the
// level-a block (see above). Its result depends on c, g and packs alone,
// so it is the same for every builder of one state.
func RollupLevelsBuiltV4(c, g uint64, packs int) []int {
	var fit []int // contiguous from MinRollupLevel: starts fall as levels rise
	for _, l := range RollupsEndingAt(g) {
		if start := g - 1<<l; start > 0 && start >= c {
			fit = append(fit, l)
		}
	}
	if len(fit) == 0 {
		return nil
	}
	if packs <= 0 {
		packs = DefaultCheckpointPacks
	}
	out := make([]int, 0, 1)
	for _, l := range fit[:len(fit)-1] {
		// The latest t ≤ hi with t − c a multiple of packs lies above lo.
		// lo ≥ c: the block one level up starts there and fits.
		lo, hi := g-1<<(l+1), g-1<<l
		if (hi-c)%uint64(packs) < hi-lo {
			out = append(out, l)
		}
	}
	return append(out, fit[len(fit)-1])
}

// BuiltRollupV4 is a rollup a builder stored and registered.
type BuiltRollupV4 struct {
	Ref  RollupRef
	Data []byte
}

// BuildRollupsV4 builds, stores and registers the rollups of the blocks
// that generation g of state (a version-4 view, g accepted) ends and
// RollupLevelsBuiltV4 picks (with the notebook's Options.CheckpointPacks):
// for each, the pack first, then its descriptor (invariant 10 of
// docs/publication.md: a descriptor names a stored object). src must
// read the closure of the head at g (a cache caught up to it); objects of
// the block's start it lacks only make the rollup larger. Each tree that
// replaces a tree at the same path is stored as its delta (pack version
// 2), when depths (the builder's store: how deep each base is there)
// holds the base; a reader applies a rollup only if it holds the bases
// (Pack.Bases), else it takes the block's generations. A block whose
// start lies below the active checkpoint is not built: a reader
// that far behind starts from the checkpoint.
func (n *Notebook) BuildRollupsV4(ctx context.Context, state State, g uint64, src, depths cas.Source) ([]BuiltRollupV4, error) {
	m := state.Manifest
	if m == nil || m.V4 == nil || g > m.Generation {
		return nil, nil
	}
	var out []BuiltRollupV4
	var end Increment
	for _, l := range RollupLevelsBuiltV4(m.Checkpoint.Through, g, n.opts.CheckpointPacks) {
		start := g - 1<<l
		if end.Head.IsZero() {
			inc, ok, err := n.HeadAt(ctx, state, g)
			if err != nil || !ok || inc.Generation != g {
				return out, err
			}
			end = inc
		}
		from, ok, err := n.HeadAt(ctx, state, start)
		if err != nil {
			return out, err
		}
		if !ok || from.Generation != start {
			continue // the block starts before the retained history
		}
		data, err := buildRollup(src, from.Head, end.Head, depths)
		if err != nil {
			return out, fmt.Errorf("remote: rollup of generations %d..%d: %w", start+1, g, err)
		}
		ref := RollupRef{Level: l, First: start + 1, Sum: cas.Sum(data), Size: int64(len(data))}
		key, desc, err := EncodeRegistered(Registered{Kind: EntryRollup, Rollup: ref})
		if err != nil {
			return out, err
		}
		if err := n.store.Put(ctx, ref.Key(), data); err != nil {
			return out, fmt.Errorf("remote: upload rollup: %w", err)
		}
		if err := n.store.Put(ctx, key, desc); err != nil {
			return out, fmt.Errorf("remote: register rollup: %w", err)
		}
		out = append(out, BuiltRollupV4{Ref: ref, Data: data})
	}
	return out, nil
}

// CoverV4 is one step of a version-4 catch-up: a rollup, or the
// generations First..Last one by one (their proposals and group packs).
type CoverV4 struct {
	Rollup      *RollupRef
	First, Last uint64
}

// PlanCatchUpV4 returns the plan of a reader that holds the closure of
// the head at generation reach to reach m's head, as version 2's plan
// (§3A.6) but from `current`'s rollups list: from each position, the
// largest listed rollup that holds the next generation and ends by the
// head (it may start before the position: its start is a generation the
// reader held, see above), else the next generation by itself (its
// proposal and group pack). With the blocks `current` lists that is at
// most 2·log2(k) + 4 requests for k generations (the bound above); a
// reader in a young notebook's first four generations takes them one by
// one first.
func PlanCatchUpV4(m *ManifestV4, reach uint64) []CoverV4 {
	if m == nil {
		return nil
	}
	var out []CoverV4
	for pos := reach; pos < m.Generation; {
		var best *RollupRef
		for i, r := range m.Rollups {
			last := r.First + 1<<r.Level - 1
			if r.First <= pos+1 && pos < last && last <= m.Generation && (best == nil || r.Level > best.Level) {
				best = &m.Rollups[i]
			}
		}
		if best != nil {
			out = append(out, CoverV4{Rollup: best, First: best.First, Last: best.First + 1<<best.Level - 1})
			pos = out[len(out)-1].Last
			continue
		}
		if n := len(out); n > 0 && out[n-1].Rollup == nil && out[n-1].Last == pos {
			out[n-1].Last++
		} else {
			out = append(out, CoverV4{First: pos + 1, Last: pos + 1})
		}
		pos++
	}
	return out
}

// FetchRollupV4 reads the rollup r names and checks it against r's size
// and BLAKE3.
func (n *Notebook) FetchRollupV4(ctx context.Context, r RollupRef) ([]byte, error) {
	data, _, err := n.store.Get(ctx, r.Key())
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != r.Size || cas.Sum(data) != r.Sum {
		return nil, fmt.Errorf("remote: rollup %s: %w: it does not match its descriptor", r.Key(), ErrCorruptPack)
	}
	return data, nil
}

// BuildCheckpointV4 builds the checkpoint of generation g of state (a
// version-4 view; g accepted, its head read from src, which must hold its
// closure): a pack of that closure at CheckpointKey(g, publication), a
// new UUIDv7 of the builder's, stored, then its descriptor registered
// (docs/storage.md §3C.8). The next fold that LISTs while g is in its
// write's tail makes it the active checkpoint.
func (n *Notebook) BuildCheckpointV4(ctx context.Context, state State, g uint64, src cas.Source) (Checkpoint, []byte, error) {
	m := state.Manifest
	if m == nil || m.V4 == nil || g > m.Generation || g <= m.Checkpoint.Through {
		return Checkpoint{}, nil, nil
	}
	inc, ok, err := n.HeadAt(ctx, state, g)
	if err != nil || !ok || inc.Generation != g {
		return Checkpoint{}, nil, err
	}
	data, err := buildRollup(src, cas.ID{}, inc.Head, nil) // everything the head reaches, whole
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("remote: checkpoint through %d: %w", g, err)
	}
	pub := NewUUIDv7()
	cp := Checkpoint{Pack: PackRef{Key: CheckpointKey(g, pub), Sum: cas.Sum(data), Size: int64(len(data))},
		Head: inc.Head, Through: g, Publication: pub}
	key, desc, err := EncodeRegistered(Registered{Kind: EntryCheckpoint, Checkpoint: cp})
	if err != nil {
		return Checkpoint{}, nil, err
	}
	if err := n.store.Put(ctx, cp.Pack.Key, data); err != nil {
		return Checkpoint{}, nil, fmt.Errorf("remote: upload checkpoint: %w", err)
	}
	if err := n.store.Put(ctx, key, desc); err != nil {
		return Checkpoint{}, nil, fmt.Errorf("remote: register checkpoint: %w", err)
	}
	return cp, data, nil
}

// CheckpointDueV4 reports whether the member accepted at generation g of
// m builds a checkpoint: every packs generations after the active
// checkpoint's through (so one member of a fleet builds each, and one
// whose descriptor was not copied in time is followed by the next).
func CheckpointDueV4(m *ManifestV4, g uint64, packs int) bool {
	if m == nil || packs <= 0 || g <= m.Checkpoint.Through {
		return false
	}
	d := g - m.Checkpoint.Through
	return d%uint64(packs) == 0
}
