package remote_test

import (
	"context"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A rollup builder asks for the head at each ending block's start. A
// generation in the tail costs no request; one in the segments costs the
// segments that hold it, not the sixteen generations before it as well.
func TestHeadAtReadsOnlyWhatHoldsTheGeneration(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	nb := remote.Open(m, remote.Options{})
	var p proposer
	for range 100 {
		if _, err := nb.Publish(ctx, p.build); err != nil {
			t.Fatal(err)
		}
	}
	st, err := nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mf := st.Manifest
	if len(mf.Segments) == 0 || mf.Increments[0].Generation < 85 {
		t.Fatalf("the test needs a history in segments and a tail from the late 80s: %d segments, tail from %d", len(mf.Segments), mf.Increments[0].Generation)
	}
	all, err := nb.Publications(ctx, st, 1, 100)
	if err != nil || len(all) != 100 {
		t.Fatalf("history: %d, %v", len(all), err)
	}
	headAt := func(g uint64) int {
		t.Helper()
		reader := remote.Open(m, remote.Options{}) // no segment cached
		before := m.Calls(memstore.OpGet)
		inc, ok, err := reader.HeadAt(ctx, st, g)
		if err != nil || !ok || inc != all[g-1] {
			t.Fatalf("HeadAt(%d) = %+v, %v, %v; want %+v", g, inc, ok, err, all[g-1])
		}
		return m.Calls(memstore.OpGet) - before
	}
	for _, g := range []uint64{mf.Increments[0].Generation, 96, 99} {
		if gets := headAt(g); gets != 0 {
			t.Errorf("HeadAt(%d), in the tail: %d GETs, want none", g, gets)
		}
	}
	// 64 and 80 are the starts of the level-4 blocks ending at 80 and 96;
	// the history is at most two segment levels deep here.
	for _, g := range []uint64{64, 80, 17} {
		if gets := headAt(g); gets > 2 {
			t.Errorf("HeadAt(%d), in the segments: %d GETs, want at most 2 (one per level)", g, gets)
		}
	}
}
