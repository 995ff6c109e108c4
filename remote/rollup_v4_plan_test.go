package remote

import (
	"fmt"
	"math"
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
// as a fold makes it, each builder's rollups and checkpoint copied by the
// next write (the earliest a fold can); at every head G, the plan of a
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
	}{{1024, 2100, 1100}, {100, 700, 400}} {
		t.Run(fmt.Sprint(tc.packs), func(t *testing.T) {
			if raceDetector {
				tc.last = tc.raceLast // still past a checkpoint
			}
			var m *ManifestV4
			var pending []Registered
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
				for _, l := range RollupLevelsV4(g) {
					if start := g - 1<<l; start >= m.Checkpoint.Through {
						pending = append(pending, rollupReg(l, start+1))
					}
				}
				if CheckpointDueV4(m, g, int(tc.packs)) {
					pub := v4id(int(1_000_000 + g))
					pending = append(pending, Registered{Kind: EntryCheckpoint, Checkpoint: Checkpoint{
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
			for _, l := range RollupLevelsV4(g) {
				if start := g - 1<<l; start >= m.Checkpoint.Through {
					pending = append(pending, rollupReg(l, start+1))
				}
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
