package remote_test

import (
	"math"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// With every rollup built, the catch-up plan from any reach r to any
// generation g has at most 2*log2(g-r)+1 packs (the bound of issue 17 is
// 2*log2(k)+4 requests, `current` included), and covers (r, g] exactly in
// order: every generation above r is in one item, none is skipped.
func TestPlanCatchUpBound(t *testing.T) {
	for g := uint64(1); g <= 2100; g += 7 {
		m := &remote.Manifest{Version: 2, Generation: g, Upgraded: 1,
			Increments: []remote.Increment{{Generation: g}}}
		for r := uint64(0); r < g; r += 1 + (g-r)/40 {
			plan := remote.PlanCatchUpItems(m, r)
			k := float64(g - r)
			if bound := int(2*math.Log2(k) + 1); len(plan) > max(bound, 1) {
				t.Fatalf("r=%d g=%d: %d items, bound %d: %v", r, g, len(plan), bound, plan)
			}
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
