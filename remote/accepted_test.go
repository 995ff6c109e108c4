package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A writer learns whether its publication was accepted by searching the
// history for its ID. Only a write conditional on a generation it offered
// or attempted on can name it, and such a write gives every generation it
// names one time: the search ends with that run, however far `current`
// has moved on, so a writer fifty generations behind reads a segment or
// two, not every segment between.
func TestAcceptedSinceSearchesOnlyTheWritesThatCanNameUs(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	clock := time.UnixMilli(1_800_000_000_000)
	frozen := false
	now := func() time.Time {
		if !frozen {
			clock = clock.Add(time.Second)
		}
		return clock
	}
	nb := remote.Open(m, remote.Options{Now: now})
	var p proposer
	for g := uint64(1); g <= 100; g++ {
		// Generations 41 to 44 share one time, as the members of one write
		// conditional on 40 do.
		frozen = g >= 42 && g <= 44
		if _, err := nb.Publish(ctx, p.build); err != nil {
			t.Fatal(err)
		}
	}
	pubOf := func(g uint64) string { return p.pubs[g-1] } // one attempt each
	st, err := nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Generation() != 100 || len(st.Manifest.Segments) == 0 {
		t.Fatalf("generation %d, %d segments: the test needs a history in segments", st.Generation(), len(st.Manifest.Segments))
	}

	search := func(g uint64, attempted ...uint64) (bool, int) {
		t.Helper()
		reader := remote.Open(m, remote.Options{}) // no segment cached
		before := m.Calls(memstore.OpGet)
		inc, ok, err := reader.AcceptedSince(ctx, st, pubOf(g), attempted...)
		if err != nil {
			t.Fatal(err)
		}
		if ok && inc.Generation != g {
			t.Fatalf("found %s at generation %d, want %d", pubOf(g), inc.Generation, g)
		}
		return ok, m.Calls(memstore.OpGet) - before
	}

	// The write conditional on 40 named 41 to 44: a member at 43 is found,
	// and the search reads only the segments around those generations.
	if ok, gets := search(43, 40); !ok || gets > 3 {
		t.Fatalf("a member of the write after our attempt: found %v after %d GETs, want found after at most 3", ok, gets)
	}
	// The write after it (45) has another time: it cannot be ours, and
	// the search stops before it.
	if ok, _ := search(45, 40); ok {
		t.Fatalf("the search went past the write conditional on our generation")
	}
	before := m.Calls(memstore.OpGet)
	if _, err := remote.Open(m, remote.Options{}).Publications(ctx, st, 11, 100); err != nil {
		t.Fatal(err)
	}
	between := m.Calls(memstore.OpGet) - before
	if _, gets := search(99, 40); gets > 3 || gets >= between {
		t.Fatalf("a search sixty generations behind read %d segments, want at most 3 (the whole history between: %d)", gets, between)
	}
	// Attempts on 10 and 60 (and on 98, in the tail): the writes after
	// each are searched, and nothing between them is read.
	for _, g := range []uint64{11, 61, 99} {
		if ok, _ := search(g, 10, 60, 98); !ok {
			t.Fatalf("the write on %d was not searched", g-1)
		}
	}
	if ok, _ := search(12, 10, 60, 98); ok {
		t.Fatalf("the search read a write on a generation nobody attempted on")
	}
	if _, gets := search(50, 10, 60, 98); gets > 6 || gets >= between {
		t.Fatalf("a search of two writes far behind read %d segments, want at most 6 (the whole history between: %d)", gets, between)
	}
	// In the tail, no request at all.
	if ok, gets := search(99, 98); !ok || gets != 0 {
		t.Fatalf("a publication in the tail: found %v after %d GETs, want found with none", ok, gets)
	}
}
