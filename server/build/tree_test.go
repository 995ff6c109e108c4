package build

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// The paths a commit publishes (and reports in its diffstat) are exactly
// those where the merged tree differs from R: applying them to R gives
// the merged tree, and no path R and the merge agree on is listed. The
// trees are drawn from a fixed seed, so a failure replays.
func TestChangedPathsTakeRToTheMergedTree(t *testing.T) {
	const seed = 42
	rng := rand.New(rand.NewPCG(seed, 0))
	id := func(n int) cas.ID { return cas.Sum([]byte(fmt.Sprint(n))) }
	for round := range 500 {
		r, ids := map[string]cas.ID{}, map[string]cas.ID{}
		for p := range rng.IntN(12) {
			r[fmt.Sprintf("f%d", p)] = id(rng.IntN(4))
		}
		for p := range rng.IntN(12) {
			ids[fmt.Sprintf("f%d", p)] = id(rng.IntN(4))
		}
		changes := changedPaths(r, ids)
		got := maps.Clone(r)
		for p, cid := range changes {
			if cid.IsZero() {
				if _, ok := got[p]; !ok {
					t.Fatalf("seed %d round %d: %q listed as removed but R lacks it", seed, round, p)
				}
				delete(got, p)
				continue
			}
			if rid, ok := r[p]; ok && rid == cid {
				t.Fatalf("seed %d round %d: %q listed though R holds it unchanged", seed, round, p)
			}
			got[p] = cid
		}
		if !maps.Equal(got, ids) {
			t.Fatalf("seed %d round %d: R with the changes applied is %v, want %v", seed, round, got, ids)
		}
	}
}
