package server

import (
	"fmt"
	"math"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A reader that last synchronised k generations ago catches up in at most
// 2*log2(k)+4 GETs (issue 17), current included: the rollups the writers
// built in the background and the newest increments, never one GET per
// increment. What it reads is the writers' notebook, including content
// deleted and later restored (the closure rule of the increments).
func TestCatchUpInLogarithmicGets(t *testing.T) {
	t.Skip(v4CatchUpRollups)
	for _, k := range []int{10, 100} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			store := memstore.New()
			w := newAgent(t, store)
			r := newAgent(t, store)
			w.pull()
			w.write("keep.md", "kept\n")
			w.write("gone.md", "deleted, then restored\n")
			w.write("log.md", "")
			for i := range 7 {
				w.write(fmt.Sprintf("f%d.md", i), "")
			}
			w.commit("seed")
			for i := range 5 {
				w.appendTo("log.md", fmt.Sprint("warm ", i, "\n"))
				w.commit("warm")
			}
			r.pull()
			for i := range k {
				switch i {
				case 1:
					w.remove("gone.md")
				case k - 2:
					w.write("gone.md", "deleted, then restored\n")
				default:
					w.appendTo(fmt.Sprintf("f%d.md", i%7), fmt.Sprint("line ", i, "\n"))
				}
				w.commit(fmt.Sprint("c", i))
			}
			w.e.background.Wait() // the rollups of the blocks that ended
			before := store.Calls(memstore.OpGet) + store.Calls(memstore.OpHead)
			r.pull()
			gets := store.Calls(memstore.OpGet) + store.Calls(memstore.OpHead) - before
			bound := int(2*math.Log2(float64(k)) + 4)
			t.Logf("k=%d: %d GETs (bound %d)", k, gets, bound)
			if gets > bound {
				t.Fatalf("catching up %d generations took %d GETs, more than 2*log2(k)+4 = %d", k, gets, bound)
			}
			equalMaps(t, "reader", r.files(), w.files())
		})
	}
}

// Rollups nobody built (a writer that died before its background step)
// cost requests, never correctness: the reader fetches the halves, down
// to the increments.
func TestCatchUpWithoutRollups(t *testing.T) {
	store := memstore.New()
	w := newAgent(t, store)
	r := newAgent(t, store)
	w.pull()
	for i := range 3 {
		w.write(fmt.Sprintf("f%d.md", i), "")
	}
	w.commit("seed")
	r.pull()
	for i := range 40 {
		w.appendTo(fmt.Sprintf("f%d.md", i%3), fmt.Sprint("line ", i, "\n"))
		w.commit(fmt.Sprint("c", i))
	}
	w.e.background.Wait()
	objs, _ := store.List(t.Context(), remote.RollupsPrefix)
	if len(objs) == 0 {
		t.Fatal("no rollups were built")
	}
	for _, o := range objs[:len(objs)/2] {
		if err := store.Delete(t.Context(), o.Key); err != nil {
			t.Fatal(err)
		}
	}
	r.pull()
	equalMaps(t, "reader", r.files(), w.files())
}
