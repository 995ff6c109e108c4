package remote_test

import (
	"context"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// ChainsBetween lists, for a generation range, the chains that hold it as
// far as the range reaches: each such chain's increments from its first
// through the range's end, exactly as Chains lists them, so that a reader
// fetches every pack a tree in the range needs. A range in the newest
// chain reads fewer segments than the whole history.
func TestChainsBetweenListsTheChainsOfTheRange(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	w := newTreeWriter(m)
	for _, n := range []int{40, 40, 30} {
		w.commitN(t, n)
		if n == 30 {
			break
		}
		if _, err := w.nb.Checkpoint(ctx, remote.CheckpointOptions{Retained: 4, MinIncrements: 5}); err != nil {
			t.Fatal(err)
		}
	}
	st, all := chainsNow(t, w.nb)
	if len(all) != 3 {
		t.Fatalf("the test needs three chains, has %d", len(all))
	}
	gens := func(incs []remote.Increment) []uint64 {
		var out []uint64
		for _, inc := range incs {
			out = append(out, inc.Generation)
		}
		return out
	}
	last := st.Manifest.Generation
	for _, r := range [][2]uint64{{1, last}, {last - 3, last}, {50, 60}, {2, 2}, {41, 41}, {30, 45}} {
		reader := remote.Open(m, remote.Options{}) // no segment cached
		got, err := reader.ChainsBetween(ctx, st, 0, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, full := range all {
			var want []uint64
			holds := false
			for _, inc := range full.Increments {
				if inc.Generation <= r[1] {
					want = append(want, inc.Generation)
				}
				holds = holds || inc.Generation >= r[0] && inc.Generation <= r[1]
			}
			if !holds {
				continue
			}
			i := slices.IndexFunc(got, func(c remote.Chain) bool { return c.Checkpoint == full.Checkpoint })
			if i < 0 || !slices.Equal(gens(got[i].Increments), want) {
				t.Errorf("range %v, chain through %d: listed %v, want %v", r, full.Checkpoint.Through, got, want)
			}
		}
	}
	reads := func(list func(*remote.Notebook) error) int {
		before := m.Calls(memstore.OpGet)
		if err := list(remote.Open(m, remote.Options{})); err != nil {
			t.Fatal(err)
		}
		return m.Calls(memstore.OpGet) - before
	}
	whole := reads(func(n *remote.Notebook) error { _, err := n.ChainsAbove(ctx, st, 0); return err })
	newest := reads(func(n *remote.Notebook) error { _, err := n.ChainsBetween(ctx, st, 0, last-3, last); return err })
	if newest >= whole {
		t.Errorf("the newest publications read %d objects, the whole history %d", newest, whole)
	}
}
