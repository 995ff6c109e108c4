package remote

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// planCost is what a catch-up by plan costs in requests, `current`
// included: one GET per rollup; for a run of generations taken alone, one
// per proposal and, with groupPacks, one per group pack (each generation
// its own write, the worst case), and the segments that index the run
// when it lies below the tail (one per level walked down).
func planCost(m *ManifestV4, plan []CoverV4, groupPacks bool) (req, alone int, belowTail bool) {
	req = 1
	for _, step := range plan {
		if step.Rollup != nil {
			req++
			continue
		}
		n := int(step.Last - step.First + 1)
		alone += n
		req += n
		if groupPacks {
			req += n
		}
		if step.First < m.Increments[0].Generation {
			belowTail = true
			for _, s := range m.Segments {
				if s.First <= step.First && step.First <= s.Last {
					req += s.Level
				}
			}
		}
	}
	return req, alone, belowTail
}

// checkCover fails unless plan takes a reader at reach to m's head:
// steps back to back, each holding the next generation, none past the
// head, rollups only as `current` lists them.
func checkCover(t *testing.T, m *ManifestV4, reach uint64, plan []CoverV4) {
	t.Helper()
	pos := reach
	for _, step := range plan {
		if step.First > pos+1 || step.Last <= pos || step.Last > m.Generation {
			t.Fatalf("G=%d from %d: step %d..%d does not continue from %d", m.Generation, reach, step.First, step.Last, pos)
		}
		if r := step.Rollup; r != nil {
			if r.First != step.First || r.First+1<<r.Level-1 != step.Last || r.First <= m.Checkpoint.Through {
				t.Fatalf("G=%d from %d: rollup %+v for step %d..%d", m.Generation, reach, *r, step.First, step.Last)
			}
		}
		pos = step.Last
	}
	if pos != m.Generation {
		t.Fatalf("G=%d from %d: the plan stops at %d", m.Generation, reach, pos)
	}
}

// TestCatchUpPlanBound checks the catch-up bound of rollup_v4.go
// exhaustively: a notebook grows one generation per write up to 2,100
// (across the checkpoint of generation 1,024, and with a checkpoint every
// 100 generations up to 700), `current` made by NextV4 and AddRegistered
// as a fold makes it, each builder's rollups copied by the next write
// (the earliest a fold can), its checkpoint by the next write or 8 writes
// later (a writer alone LISTs once in 8 commits: the blocks of the climb
// from it that its builders built before it was active must be there);
// the blocks built are RollupLevelsBuiltV4's; at every head G, the plan of a
// reader at every s < G (one behind the active checkpoint starts from
// it, one GET more) is a valid cover and costs at most 2·log2(G−s) + 4
// requests, `current` included. Generations taken alone come only at the
// end, from the tail, except in a young notebook's first four
// generations; what those cost above the bound, and what group packs add
// when every generation has its own, is pinned below (and in the docs).
// Under the race detector (make race) it checks the heads up to 400 and
// from 1,000 to 1,100 only.
func TestCatchUpPlanBound(t *testing.T) {
	for _, tc := range []struct {
		packs, last, raceLast uint64
		late                  uint64 // generations a checkpoint waits before a fold copies it
	}{{1024, 2100, 1100, 0}, {100, 700, 400, 0}, {100, 700, 400, 8}, {24, 400, 400, 8}} {
		t.Run(fmt.Sprintf("%d-late%d", tc.packs, tc.late), func(t *testing.T) {
			if raceDetector {
				tc.last = tc.raceLast // still past a checkpoint
			}
			var m *ManifestV4
			var pending []Registered
			late := map[uint64][]Registered{} // by the generation whose write copies them
			var plans, maxSize int
			excess := map[string]float64{}
			note := func(key string, d float64) { excess[key] = max(excess[key], d) }
			for g := uint64(1); g <= tc.last; g++ {
				var parent uint64
				if m != nil {
					parent = m.Generation
				}
				next, _, err := NextV4(m, v4store, 2000+g, []MemberV4{{Publication: v4id(int(g)), Proposal: parent,
					Head: v4head(int(g)), Time: 1000 + g}}, GroupRef{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				pending = append(pending, late[g]...)
				delete(late, g)
				next.AddRegistered(pending, func(h uint64) (cas.ID, bool) { return v4head(int(h)), true })
				m, pending = next, nil
				if err := m.Validate(); err != nil {
					t.Fatalf("G=%d: %v", g, err)
				}
				b, err := EncodeManifestV4(m)
				if err != nil {
					t.Fatal(err)
				}
				maxSize = max(maxSize, len(b))
				// The builder of g: the blocks g ends, the checkpoint due.
				for _, l := range RollupLevelsBuiltV4(m.Checkpoint.Through, g, int(tc.packs)) {
					pending = append(pending, rollupReg(l, g-1<<l+1))
				}
				if CheckpointDueV4(m, g, int(tc.packs)) {
					pub := v4id(int(1_000_000 + g))
					late[g+1+tc.late] = append(late[g+1+tc.late], Registered{Kind: EntryCheckpoint, Checkpoint: Checkpoint{
						Pack: PackRef{Key: CheckpointKey(g, pub), Sum: cas.Sum([]byte(pub)), Size: 1000},
						Head: v4head(int(g)), Through: g, Publication: pub}})
				}
				if raceDetector && g > 400 && g < 1000 {
					continue // the young notebook and the first checkpoint only
				}
				c := m.Checkpoint.Through
				for s := range g {
					reach, extra := s, 0
					if s < c {
						reach, extra = c, 1 // the checkpoint's pack
					}
					plan := PlanCatchUpV4(m, reach)
					checkCover(t, m, reach, plan)
					plans++
					k := float64(g - s)
					bound := 2*math.Log2(k) + 4
					young := reach < 4
					for _, groups := range []bool{false, true} {
						req, alone, below := planCost(m, plan, groups)
						req += extra
						if !young && (alone > 4 || below) {
							t.Fatalf("G=%d from %d: %d generations alone (below the tail: %v): %+v", g, s, alone, below, plan)
						}
						key := fmt.Sprintf("young=%v groups=%v", young, groups)
						note(key, float64(req)-bound)
					}
				}
			}
			// The pinned excesses: none for a reader past the first four
			// generations; at most 2 requests when every generation it
			// takes alone has its own group pack; in a young notebook's
			// first four generations, up to 2 (10 with group packs).
			limits := map[string]float64{
				"young=false groups=false": 0,
				"young=false groups=true":  2,
				"young=true groups=false":  2,
				"young=true groups=true":   10,
			}
			for key, d := range excess {
				t.Logf("%s: worst %.2f requests over 2·log2(k)+4", key, d)
				if d > limits[key] {
					t.Errorf("%s: a plan costs %.2f requests more than 2·log2(k)+4 (limit %v)", key, d, limits[key])
				}
			}
			t.Logf("%d plans; largest current %d bytes", plans, maxSize)
			if maxSize > 16<<10 {
				t.Errorf("current reached %d bytes, more than 16 KiB", maxSize)
			}
		})
	}
}

// The climb blocks of docs/storage.md §3C.8, level by level: from the
// genesis the blocks (2^a, 2^(a+1)] that stand in for the first blocks;
// from a checkpoint at a multiple of 1,024 the level-10 block only; from
// one at 100, (100,104], (104,112], (112,128] and (128,256].
func TestClimbBlocks(t *testing.T) {
	for _, tc := range []struct {
		c    uint64
		want map[int]uint64 // level → first generation
	}{
		{0, map[int]uint64{2: 5, 3: 9, 4: 17, 5: 33, 6: 65, 7: 129, 8: 257, 9: 513, 10: 1025}},
		{3, map[int]uint64{2: 5, 3: 9, 4: 17, 5: 33, 6: 65, 7: 129, 8: 257, 9: 513, 10: 1025}},
		{1024, map[int]uint64{10: 1025}},
		{100, map[int]uint64{2: 101, 3: 105, 4: 113, 7: 129, 8: 257, 9: 513, 10: 1025}},
		{6, map[int]uint64{3: 9, 4: 17, 5: 33, 6: 65, 7: 129, 8: 257, 9: 513, 10: 1025}},
	} {
		for l := MinRollupLevel - 1; l <= MaxRollupLevel+1; l++ {
			if got := climbFirstV4(tc.c, l); got != tc.want[l] {
				t.Errorf("from %d, level %d: climb block from %d, want %d", tc.c, l, got, tc.want[l])
			}
		}
	}
}

// BenchmarkCurrentSizeV4 reports the largest `current` over 20,000
// generations written one per fold, every member with an author of 40
// bytes, rollups and checkpoints (every 1,024) registered and copied as
// folds copy them: the size row of docs/benchmarks.md at a long history,
// with the listing the rules give rather than a fixed one
// (TestManifestV4Size).
//
//	go test -run '^$' -bench CurrentSizeV4 -benchtime 1x ./remote/
func BenchmarkCurrentSizeV4(b *testing.B) {
	for range b.N {
		var m *ManifestV4
		var pending []Registered
		largest, rollups := 0, 0
		for g := uint64(1); g <= 20000; g++ {
			var parent uint64
			if m != nil {
				parent = m.Generation
			}
			next, _, err := NextV4(m, v4store, 2000+g, []MemberV4{{Publication: v4id(int(g)), Proposal: parent,
				Head: v4head(int(g)), Time: 1000 + g, Author: strings.Repeat("a", 40)}}, GroupRef{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			next.AddRegistered(pending, func(h uint64) (cas.ID, bool) { return v4head(int(h)), true })
			m, pending = next, nil
			enc, err := EncodeManifestV4(m)
			if err != nil {
				b.Fatal(err)
			}
			largest, rollups = max(largest, len(enc)), max(rollups, len(m.Rollups))
			for _, l := range RollupLevelsBuiltV4(m.Checkpoint.Through, g, DefaultCheckpointPacks) {
				pending = append(pending, rollupReg(l, g-1<<l+1))
			}
			if CheckpointDueV4(m, g, DefaultCheckpointPacks) {
				pub := v4id(int(1_000_000 + g))
				pending = append(pending, Registered{Kind: EntryCheckpoint, Checkpoint: Checkpoint{
					Pack: PackRef{Key: CheckpointKey(g, pub), Sum: cas.Sum([]byte(pub)), Size: 1000},
					Head: v4head(int(g)), Through: g, Publication: pub}})
			}
		}
		b.ReportMetric(float64(largest), "max-bytes")
		b.Logf("largest current over 20,000 generations: %d bytes, at most %d rollups listed", largest, rollups)
	}
}

// The blocks a builder builds (RollupLevelsBuiltV4): the largest that
// ends at g, starting after 0 and at or after the active checkpoint, and
// a smaller one only where a checkpoint may land in the first half of
// the block one level up.
func TestRollupLevelsBuilt(t *testing.T) {
	for _, tc := range []struct {
		c, g  uint64
		packs int
		want  []int
	}{
		{0, 3, 1024, nil},
		{0, 4, 1024, nil},        // (0,4] is a first block
		{0, 8, 1024, []int{2}},   // (0,8] is a first block: (4,8] stands in
		{0, 16, 1024, []int{3}},  // (8,16], not (12,16]
		{0, 200, 1024, []int{3}}, // (192,200]
		{0, 192, 1024, []int{6}}, // (128,192]: levels 2–5 end there too
		{0, 2048, 1024, []int{10}},
		{5, 8, 1024, nil},            // (4,8] starts before the checkpoint
		{100, 128, 1024, []int{4}},   // (112,128]; (96,128] starts before 100
		{0, 104, 100, []int{2, 3}},   // a checkpoint at 100 would drop (96,104]
		{0, 112, 100, []int{3, 4}},   // … and (96,112]: the climb from 100 takes (104,112]
		{0, 128, 100, []int{4, 6}},   // … and (64,128]: it takes (112,128]
		{100, 208, 100, []int{3, 4}}, // a checkpoint at 200 would drop (192,208]
		{0, 104, 0, []int{3}},        // packs 0: the default interval
	} {
		if got := RollupLevelsBuiltV4(tc.c, tc.g, tc.packs); !slices.Equal(got, tc.want) {
			t.Errorf("c=%d g=%d packs=%d: levels %v, want %v", tc.c, tc.g, tc.packs, got, tc.want)
		}
	}
}

// TestRollupLevelsBuiltCostNoMore grows two notebooks side by side, as
// TestCatchUpPlanBound does: one whose builders build every block that
// ends at a generation (the rule before RollupLevelsBuiltV4), one whose
// builders build RollupLevelsBuiltV4's. At every head, a reader at every
// earlier generation pays no more requests with the second than with
// the first: the blocks not built are never read.
func TestRollupLevelsBuiltCostNoMore(t *testing.T) {
	every := func(c, g uint64, _ int) []int {
		var out []int
		for _, l := range RollupsEndingAt(g) {
			if start := g - 1<<l; start > 0 && start >= c {
				out = append(out, l)
			}
		}
		return out
	}
	for _, tc := range []struct {
		packs, last, late uint64
	}{{1024, 1100, 0}, {100, 450, 0}, {100, 450, 8}, {24, 250, 8}} {
		t.Run(fmt.Sprintf("%d-late%d", tc.packs, tc.late), func(t *testing.T) {
			rules := []func(c, g uint64, packs int) []int{every, RollupLevelsBuiltV4}
			ms := make([]*ManifestV4, 2)
			pending := make([][]Registered, 2)
			late := []map[uint64][]Registered{{}, {}}
			built := []int{0, 0}
			for g := uint64(1); g <= tc.last; g++ {
				for i, rule := range rules {
					var parent uint64
					if ms[i] != nil {
						parent = ms[i].Generation
					}
					next, _, err := NextV4(ms[i], v4store, 2000+g, []MemberV4{{Publication: v4id(int(g)), Proposal: parent,
						Head: v4head(int(g)), Time: 1000 + g}}, GroupRef{}, nil)
					if err != nil {
						t.Fatal(err)
					}
					next.AddRegistered(append(pending[i], late[i][g]...), func(h uint64) (cas.ID, bool) { return v4head(int(h)), true })
					ms[i], pending[i] = next, nil
					for _, l := range rule(ms[i].Checkpoint.Through, g, int(tc.packs)) {
						pending[i] = append(pending[i], rollupReg(l, g-1<<l+1))
						built[i]++
					}
					if CheckpointDueV4(ms[i], g, int(tc.packs)) {
						pub := v4id(int(1_000_000 + g))
						late[i][g+1+tc.late] = append(late[i][g+1+tc.late], Registered{Kind: EntryCheckpoint, Checkpoint: Checkpoint{
							Pack: PackRef{Key: CheckpointKey(g, pub), Sum: cas.Sum([]byte(pub)), Size: 1000},
							Head: v4head(int(g)), Through: g, Publication: pub}})
					}
				}
				if ms[0].Checkpoint.Through != ms[1].Checkpoint.Through {
					t.Fatalf("G=%d: the checkpoints differ", g)
				}
				c := ms[0].Checkpoint.Through
				for s := range g {
					reach := max(s, c)
					var cost [2]int
					for i, m := range ms {
						plan := PlanCatchUpV4(m, reach)
						checkCover(t, m, reach, plan)
						cost[i], _, _ = planCost(m, plan, true)
					}
					if cost[1] > cost[0] {
						t.Fatalf("G=%d from %d: %d requests, %d when every block is built", g, s, cost[1], cost[0])
					}
				}
			}
			t.Logf("%d blocks built, %d with every block", built[1], built[0])
		})
	}
}
