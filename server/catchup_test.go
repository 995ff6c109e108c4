package server

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// A reader that last synchronised k generations ago catches up in at most
// 2*log2(k)+4 requests (issue 17, invariant 12 of docs/publication.md),
// current included: the rollups `current` lists and the newest
// generations, never one request per generation. It holds from a start
// inside a first block (the young notebook's climb stands in for it),
// from a start older than every newest block of the levels it needs, and
// from behind the active checkpoint (its pack, then the blocks after
// it). What it reads is the writers' notebook, including content deleted
// and later restored (the closure rule of the increments). Requests are
// counted by operation, every one the pull makes.
func TestCatchUpInLogarithmicGets(t *testing.T) {
	for _, tc := range []struct {
		name        string
		warm, k     int // generations before the reader's pull (after the seed), after it
		checkpoints int // Config.CheckpointPacks (0: the default, 1,024)
	}{
		{"10", 5, 10, 0},
		{"100", 5, 100, 0},
		{"300 from an old start", 5, 300, 0},
		{"young notebook", 1, 40, 0},
		{"behind the checkpoint", 5, 150, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memstore.New()
			store := &remotetest.Recorder{Store: mem}
			var opts []agentOpt
			if tc.checkpoints > 0 {
				opts = append(opts, withCheckpoints(tc.checkpoints, 1))
			}
			w := newAgent(t, store, opts...)
			r := newAgent(t, store, opts...)
			w.pull()
			w.write("keep.md", "kept\n")
			w.write("gone.md", "deleted, then restored\n")
			w.write("log.md", "")
			for i := range 7 {
				w.write(fmt.Sprintf("f%d.md", i), "")
			}
			w.commit("seed")
			for i := range tc.warm {
				w.appendTo("log.md", fmt.Sprint("warm ", i, "\n"))
				w.commit("warm")
			}
			s := r.pull().Generation
			for i := range tc.k {
				switch i {
				case 1:
					w.remove("gone.md")
				case tc.k - 2:
					w.write("gone.md", "deleted, then restored\n")
				default:
					w.appendTo(fmt.Sprintf("f%d.md", i%7), fmt.Sprint("line ", i, "\n"))
				}
				w.commit(fmt.Sprint("c", i))
			}
			// The rollups of the blocks that ended are registered; a
			// commit by a writer with no streak LISTs, and so copies
			// them into `current` (a writer alone LISTs once in 8
			// commits, so without it what is listed would depend on
			// when the builders finished).
			w.e.publishing.Background.Wait()
			o := newAgent(t, store, opts...)
			o.pull()
			o.appendTo("log.md", "other\n")
			g := o.commit("other").Generation
			o.e.publishing.Background.Wait()
			store.Take()
			r.pull()
			reqs := store.Take()
			k := float64(g - s)
			bound := int(2*math.Log2(k) + 4)
			t.Logf("k=%d (%d..%d): %d requests (bound %d)", g-s, s, g, len(reqs), bound)
			if len(reqs) > bound {
				t.Fatalf("catching up %d generations took %d requests, more than 2*log2(k)+4 = %d:\n%s", g-s, len(reqs), bound, strings.Join(reqs, "\n"))
			}
			if tc.checkpoints > 0 && !slices.ContainsFunc(reqs, func(q string) bool { return strings.HasPrefix(q, "GET "+remote.CheckpointsPrefix) }) {
				t.Fatalf("the reader did not start from the checkpoint:\n%s", strings.Join(reqs, "\n"))
			}
			equalMaps(t, "reader", r.files(), o.files())
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
	w.e.publishing.Background.Wait()
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
