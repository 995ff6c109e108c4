package remote_test

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// With every rollup built (of the blocks that start at generation 1, the
// newest: FirstBlockLevel), the catch-up plan from any reach r to any
// generation g has at most log2(g-r)+2 packs (the largest block holding
// the next generation each time; design.md's bound is 2*log2(k)+4
// requests, `current` included), and covers (r, g] exactly in order: every
// generation above r is in one item, none is skipped.
func TestPlanCatchUpBound(t *testing.T) {
	for g := uint64(1); g <= 2100; g += 7 {
		m := &remote.Manifest{Version: 2, Generation: g, Upgraded: 1,
			Increments: []remote.Increment{{Generation: g}}}
		for r := uint64(0); r < g; r += 1 + (g-r)/40 {
			plan := remote.PlanCatchUpItems(m, r)
			if bound := int(math.Log2(float64(g-r)) + 2); len(plan) > bound {
				t.Fatalf("r=%d g=%d: %d items, bound %d: %v", r, g, len(plan), bound, plan)
			}
			checkPlanGets(t, r, g, plan)
			next := r + 1
			for i, it := range plan {
				if it.First > next || (i > 0 && it.First != next) || it.Last < it.First {
					t.Fatalf("r=%d g=%d: item %d %+v does not continue at %d", r, g, i, it, next)
				}
				next = it.Last + 1
			}
			if next != g+1 {
				t.Fatalf("r=%d g=%d: the plan ends at %d", r, g, next-1)
			}
		}
	}
}

// Every reach of a young notebook, with the newest generation fresh or
// not: when the kept first block is too fresh to ask for (the older ones
// are deleted), the plan climbs through smaller blocks and starts with up
// to four increments, within the request bound all the same; and it never
// names a first block but the kept one.
func TestPlanCatchUpGetsFromEveryLowReach(t *testing.T) {
	for g := uint64(1); g <= 300; g++ {
		m := &remote.Manifest{Version: 2, Generation: g, Upgraded: 1,
			Increments: []remote.Increment{{Generation: g}}}
		for r := range g {
			for _, fresh := range []uint64{0, g} {
				plan := remote.PlanCatchUpItemsBefore(m, r, fresh)
				for _, it := range plan {
					if it.Level > 0 && it.First == 1 && it.Level != remote.FirstBlockLevel(g) {
						t.Fatalf("r=%d g=%d fresh=%d: %+v is a first block that is not kept: %v", r, g, fresh, it, plan)
					}
				}
				checkPlanGets(t, r, g, plan)
			}
		}
	}
}

// checkPlanGets fails unless plan, from r to g, costs at most
// 2*log2(g-r)+4 requests (design.md's bound for catching up): one GET per
// rollup and per increment, and the GET of `current`.
func checkPlanGets(t *testing.T, r, g uint64, plan []remote.PlanItem) {
	t.Helper()
	gets := 1
	for _, it := range plan {
		if it.Level > 0 {
			gets++
		} else {
			gets += int(it.Last - it.First + 1)
		}
	}
	if bound := 2*math.Log2(float64(g-r)) + 4; float64(gets) > bound {
		t.Fatalf("r=%d g=%d: %d GETs, bound %.1f: %v", r, g, gets, bound, plan)
	}
}

// planBound is the most items a plan from r to g has when the kept first
// block may be too fresh to ask for: log2(k)+2 from a reach at or above
// 2^MaxRollupLevel, where no block holding the next generation starts at
// generation 1; below it, the plan may climb through smaller blocks first.
func planBound(r, g uint64) int {
	k := math.Log2(float64(g - r))
	if r >= 1<<remote.MaxRollupLevel {
		return int(k + 2)
	}
	return int(2*k + 3)
}

// A cold reader right after a checkpoint swap: its reach is the
// checkpoint's through-generation and `current`'s generation is the swap,
// after the newest increment. A block ending at the swap is built only by
// the next publication (BuildRollups), so the plan must stop at the
// newest increment and never ask for it (it used to: one 404 per cold
// pull, TestCLICheckpointsUnderConcurrentWriters).
func TestPlanCatchUpStopsAtTheHead(t *testing.T) {
	for _, tc := range []struct{ through, last, swap uint64 }{
		{through: 6, last: 7, swap: 8},    // the level-2 block (4, 8] ends at the swap
		{through: 13, last: 15, swap: 16}, // (12, 16], and the level-3 and level-4 blocks ending at 16
		{through: 30, last: 31, swap: 32}, // (28, 32]: levels 2..5 end at 32
		{through: 61, last: 63, swap: 64}, // levels 2..6
		{through: 100, last: 103, swap: 104},
	} {
		m := &remote.Manifest{Version: 3, Generation: tc.swap, Upgraded: 1,
			Checkpoint: remote.Checkpoint{Through: tc.through}, Increments: []remote.Increment{{Generation: tc.last}}}
		plan := remote.PlanCatchUpItems(m, tc.through)
		if len(plan) == 0 || plan[len(plan)-1].Last != tc.last {
			t.Fatalf("%+v: plan %v does not end at the newest increment", tc, plan)
		}
		for _, it := range plan {
			if it.Last > tc.last {
				t.Fatalf("%+v: plan %v asks for a block ending after the head (%d)", tc, plan, tc.last)
			}
		}
	}
}

// A reader at the checkpoint fetches only the increments after it: a
// checkpoint swap right after the checkpoint's generation holds nothing, so
// the plan asks for no rollup of the block that ends at it (the cold pull of
// TestCLICheckpointsUnderConcurrentWriters fetched (64, 68] for nothing).
func TestPlanCatchUpSkipsSwapsAfterReach(t *testing.T) {
	m := &remote.Manifest{Version: 3, Generation: 71, Upgraded: 1, Checkpoint: remote.Checkpoint{Through: 67},
		Increments: []remote.Increment{{Generation: 66}, {Generation: 67}, {Generation: 69}, {Generation: 70}, {Generation: 71}}}
	plan := remote.PlanCatchUpItems(m, 67)
	if len(plan) != 1 || plan[0].Level != 0 || plan[0].First != 69 || plan[0].Last != 71 {
		t.Fatalf("plan %+v, want only the increments 69..71", plan)
	}
	// Without proof that nothing lies between (the tail starts after
	// reach), the plan still covers every generation.
	m.Increments = m.Increments[2:]
	if plan := remote.PlanCatchUpItems(m, 67); len(plan) == 0 || plan[0] != (remote.PlanItem{Level: 2, First: 65, Last: 68}) {
		t.Fatalf("plan %+v, want it to start with the rollup (64, 68] holding reach's block", plan)
	}
}

// The publication after checkpoint swaps builds the rollups of the blocks
// that end at those swaps (nobody else does), so it must be told it has
// work even when its own generation ends no block.
func TestRollupsDueAfterSwaps(t *testing.T) {
	for _, tc := range []struct {
		prev, last, through uint64
		want                bool
	}{
		{prev: 66, last: 67, want: false},              // 67 ends no block
		{prev: 67, last: 68, want: true},               // 68 ends (64, 68]
		{prev: 67, last: 69, through: 67, want: true},  // the swap at 68 ends (64, 68]
		{prev: 65, last: 67, through: 65, want: false}, // the swap at 66 ends no block
		{prev: 59, last: 61, through: 59, want: true},  // the swap at 60 ends (56, 60]
		{prev: 59, last: 62, through: 61, want: false}, // 60 is at or below the checkpoint: never read
	} {
		m := &remote.Manifest{Version: 3, Generation: tc.last, Upgraded: 1, Checkpoint: remote.Checkpoint{Through: tc.through},
			Increments: []remote.Increment{{Generation: tc.prev}, {Generation: tc.last}}}
		if got := m.RollupsDue(); got != tc.want {
			t.Errorf("%+v: RollupsDue = %v", tc, got)
		}
	}
}

// Generations published too recently for their rollups to be written are
// fetched as increments: the plan asks for no block ending at or after
// the fresh bound, and still covers (r, g] in order.
func TestPlanCatchUpAvoidsFreshBlocks(t *testing.T) {
	for g := uint64(20); g <= 1100; g += 13 {
		m := &remote.Manifest{Version: 2, Generation: g, Upgraded: 1,
			Increments: []remote.Increment{{Generation: g}}}
		for _, fresh := range []uint64{g, g - 1, g - 5} {
			for r := uint64(0); r < g; r += 1 + (g-r)/20 {
				plan := remote.PlanCatchUpItemsBefore(m, r, fresh)
				next := r + 1
				for i, it := range plan {
					if it.Level > 0 && it.Last >= fresh {
						t.Fatalf("r=%d g=%d fresh=%d: item %+v ends at or after the fresh bound", r, g, fresh, it)
					}
					if it.First > next || (i > 0 && it.First != next) || it.Last < it.First {
						t.Fatalf("r=%d g=%d fresh=%d: item %d %+v does not continue at %d", r, g, fresh, i, it, next)
					}
					next = it.Last + 1
				}
				if next != g+1 {
					t.Fatalf("r=%d g=%d fresh=%d: the plan ends at %d", r, g, fresh, next-1)
				}
				if len(plan) > planBound(r, g)+int(g-fresh)+3 {
					t.Fatalf("r=%d g=%d fresh=%d: %d items: %v", r, g, fresh, len(plan), plan)
				}
			}
		}
	}
}

// An increment is fresh when it was published less than a few round trips
// of `GET current` ago by the reader's clock: the round trip is the
// reader's own last read.
func TestFreshFromTheTailsTimes(t *testing.T) {
	clock := time.UnixMilli(1_000_000)
	now := func() time.Time { clock = clock.Add(10 * time.Millisecond); return clock } // a GET of current: 10 ms
	n := remote.Open(memstore.New(), remote.Options{Now: now})
	if _, err := n.ReadCurrent(t.Context()); err != nil {
		t.Fatal(err)
	}
	at := func(ago time.Duration) uint64 { return uint64(clock.Add(-ago).UnixMilli()) }
	m := &remote.Manifest{Version: 2, Generation: 9, Upgraded: 1, Increments: []remote.Increment{
		{Generation: 5, Time: at(time.Second)}, {Generation: 6, Time: at(200 * time.Millisecond)},
		{Generation: 7, Time: at(25 * time.Millisecond)}, {Generation: 8, Time: at(20 * time.Millisecond)}, {Generation: 9, Time: at(0)}}}
	if got := n.FreshFrom(m); got != 7 {
		t.Fatalf("FreshFrom = %d, want 7 (published within 4 round trips of 10 ms)", got)
	}
	m.Increments[4].Time = 0 // unknown (version 1): never fresh
	if got := n.FreshFrom(m); got != 0 {
		t.Fatalf("FreshFrom = %d with the newest time unknown, want 0", got)
	}
}

// An absent rollup is replaced by smaller blocks that cover what the
// reader still lacks of it, in order, ending with its level-2 block (the
// first a builder writes) rather than descending through its larger
// halves, which end where it does and are most likely absent too. The
// replacement of a first block (one starting at generation 1) names no
// first block: all but the newest are deleted.
func TestAbsentRollupReplacement(t *testing.T) {
	for level := remote.MinRollupLevel + 1; level <= remote.MaxRollupLevel; level++ {
		size := uint64(1) << level
		for _, first := range []uint64{1, 1 + size, 1 + 7*size} {
			last := first + size - 1
			for reach := first - 1; reach < last; reach += 1 + size/16 {
				got := remote.InsteadOf(remote.PlanItem{Level: level, First: first, Last: last}, reach)
				next := reach + 1
				for i, it := range got {
					// Increments only up to generation 4, whose blocks
					// are all first blocks; no first block at all.
					if it.Level >= level || (it.Level == 0 && it.Last != 4) || (it.Level > 0 && it.First == 1) {
						t.Fatalf("level %d (%d..%d) reach %d: item %+v", level, first, last, reach, it)
					}
					if it.First > next || (i > 0 && it.First != next) || it.First < first {
						t.Fatalf("level %d (%d..%d) reach %d: item %d %+v does not continue at %d: %v", level, first, last, reach, i, it, next, got)
					}
					next = it.Last + 1
				}
				if end := got[len(got)-1]; end.Level != remote.MinRollupLevel || end.Last != last {
					t.Fatalf("level %d (%d..%d) reach %d: ends with %+v", level, first, last, reach, end)
				}
				bound := level
				if first == 1 {
					bound = 2 * level // climbing from the reach, under the deleted first blocks
				}
				if len(got) > bound {
					t.Fatalf("level %d reach %d: %d items: %v", level, reach, len(got), got)
				}
			}
		}
	}
}

// What rollups store, and that catch-up through them works: a notebook
// whose first commit is its bulk (here 8 notes of 6 KB), then 150 small
// commits, each appending a line to one note, with every rollup built as
// the engine builds them (BuildRollups after each publication).
//
//   - No object is in two rollups of one level: a level's blocks do not
//     overlap, and each rollup holds only what its block added that is
//     still reachable at its end (the history removes nothing here, so
//     nothing comes back).
//   - One rollup holds the first generation's state: of the first blocks
//     (those starting at generation 1), each the whole notebook at its
//     end, only the newest is kept (before, one per level: a 1 MiB note
//     was stored seven times over 200 appends).
//   - A reader that holds the closure of any generation's head reaches
//     the newest head through the plan (rollups and increments) without
//     asking for a rollup that does not exist; one that read an older
//     `current` reaches that one's head too, through 404s of the first
//     blocks deleted since and the smaller blocks that replace them.
func TestRollupsStoreEachObjectOncePerLevel(t *testing.T) {
	ctx := t.Context()
	store := memstore.New()
	w := newTreeWriter(store)
	const n = 150
	states := map[uint64]remote.State{}
	files := map[uint64]map[string][]byte{}
	for i := range n {
		acc, err := w.commit(ctx, fmt.Sprint("commit ", i), func(f map[string][]byte) {
			if i == 0 {
				for j := range 8 {
					f[fmt.Sprintf("notes/%d.md", j)] = []byte(strings.Repeat(fmt.Sprintf("seed line of note %d\n", j), 300))
				}
				return
			}
			p := fmt.Sprintf("notes/%d.md", i%8)
			f[p] = append(f[p], fmt.Sprintf("line %d\n", i)...)
		})
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		st := acc.State
		g := st.Generation()
		src, err := w.chainPacks(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.nb.BuildRollups(ctx, st, g, src); err != nil {
			t.Fatalf("rollups at %d: %v", g, err)
		}
		states[g] = st
		if files[g], err = readFiles(src, st.Head()); err != nil {
			t.Fatal(err)
		}
	}
	head := func(g uint64) cas.ID { return states[g].Head() }
	src, err := w.chainPacks(ctx, states[n])
	if err != nil {
		t.Fatal(err)
	}
	first := closure(t, src, head(1))

	kept := remote.RollupKey(remote.FirstBlockLevel(n), 1) // (0, 128]
	in := map[int]map[cas.ID]string{}                      // level → object → the rollup holding it
	for _, key := range packKeys(t, store, remote.RollupsPrefix) {
		level, last, err := remote.ParseRollupKey(key)
		if err != nil {
			t.Fatal(err)
		}
		if last == 1<<level && key != kept {
			t.Errorf("%s, a first block, is kept beside %s", key, kept)
		}
		data, _, err := store.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		p, err := cas.OpenPack(data)
		if err != nil {
			t.Fatal(err)
		}
		if in[level] == nil {
			in[level] = map[cas.ID]string{}
		}
		for _, id := range p.IDs() {
			if other, ok := in[level][id]; ok {
				t.Errorf("object %s is in %s and %s, two rollups of level %d", id, other, key, level)
			}
			in[level][id] = key
			if first[id] && key != kept {
				t.Errorf("%s holds object %s of the first generation's state", key, id)
			}
		}
	}
	for l := remote.MinRollupLevel; l <= 7; l++ {
		if len(in[l]) == 0 {
			t.Errorf("no rollup of level %d was built over %d generations", l, n)
		}
	}

	for _, g := range []uint64{5, 8, 9, 16, 17, 63, 64, 100, 128, n} {
		for _, r := range []uint64{0, 1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 33, 64, 65, 99, 127, 129, g - 1} {
			if r >= g {
				continue
			}
			have := map[cas.ID]cas.Object{}
			if r > 0 {
				for id := range closure(t, src, head(r)) {
					if have[id], err = src.Get(id); err != nil {
						t.Fatal(err)
					}
				}
			}
			reader := remote.Open(store, remote.Options{})
			stats, err := reader.CatchUp(ctx, states[g], r, 4, nil, func(packs []remote.CaughtUpPack) error {
				for _, cp := range packs {
					p, err := cas.OpenPack(cp.Data)
					if err != nil {
						return err
					}
					for _, id := range p.IDs() {
						if have[id], err = p.Get(id); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("catch-up %d → %d: %v", r, g, err)
			}
			if g == n && stats.Missing > 0 {
				t.Errorf("catch-up %d → %d asked for %d rollups that do not exist", r, g, stats.Missing)
			}
			got, err := readFiles(objectMap(have), head(g))
			if err != nil {
				t.Fatalf("catch-up %d → %d: the head's closure is incomplete: %v", r, g, err)
			}
			if !maps.EqualFunc(got, files[g], bytes.Equal) {
				t.Fatalf("catch-up %d → %d: the files differ from the writer's", r, g)
			}
		}
	}
}

// objectMap is a cas.Source over objects by ID.
type objectMap map[cas.ID]cas.Object

func (m objectMap) Get(id cas.ID) (cas.Object, error) {
	if o, ok := m[id]; ok {
		return o, nil
	}
	return cas.Object{}, cas.ErrNotFound
}

// closure returns the IDs of every object reachable from commit head.
func closure(t *testing.T, src cas.Source, head cas.ID) map[cas.ID]bool {
	t.Helper()
	out := map[cas.ID]bool{}
	var walk func(id cas.ID)
	walk = func(id cas.ID) {
		if out[id] {
			return
		}
		o, err := src.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = true
		switch o.Kind {
		case cas.KindCommit:
			c, err := cas.DecodeCommit(o)
			if err != nil {
				t.Fatal(err)
			}
			walk(c.Tree)
		case cas.KindTree:
			entries, err := cas.DecodeTree(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				walk(e.ID)
			}
		case cas.KindFile:
			f, err := cas.DecodeFile(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range f.Chunks {
				walk(ch.ID)
			}
		}
	}
	walk(head)
	return out
}
