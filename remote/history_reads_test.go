package remote_test

import (
	"context"
	"slices"
	"testing"
	"time"

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

// A catch-up reads a group write from its group pack when the write's
// first increment is known to be its leader's: the increment before it has
// another time. At the tail's start that one ended the last segment,
// whose time the segment's descriptor records.
func TestTailGroupAtTheTailsStart(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	clock := time.UnixMilli(1_800_000_000_000)
	var frozenFrom, frozenTo uint64
	var next uint64 = 1
	now := func() time.Time {
		if next < frozenFrom || next > frozenTo {
			clock = clock.Add(time.Second)
		}
		return clock
	}
	nb := remote.Open(m, remote.Options{Now: now})
	var p proposer
	publish := func(n int) {
		for range n {
			if _, err := nb.Publish(ctx, p.build); err != nil {
				t.Fatal(err)
			}
			next++
		}
	}
	read := func() *remote.Manifest {
		st, err := nb.ReadCurrent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.Manifest
	}
	publish(8) // 1..8, each its own time
	// 9..11 share one time, as the members of one write conditional on 8 do.
	frozenFrom, frozenTo = 10, 11
	publish(8) // 9..16: the tail holds 16 and folds its oldest 8
	mf := read()
	if len(mf.Segments) != 1 || mf.Segments[0].Last != 8 || mf.Increments[0].Generation != 9 {
		t.Fatalf("want a segment of 1..8 and the tail from 9: %+v, tail from %d", mf.Segments, mf.Increments[0].Generation)
	}
	if got := remote.TailGroupParents(mf, mf.Increments); !slices.Equal(got, []uint64{8}) {
		t.Errorf("groups at the tail's start after a segment of another time: %v, want the write on 8", got)
	}

	// The same run, but the segment's last increment shares its time: the
	// write began before the tail, and its leader is not known.
	same := *mf
	same.Segments = slices.Clone(mf.Segments)
	same.Segments[0].Time = mf.Increments[0].Time
	if got := remote.TailGroupParents(&same, mf.Increments); len(got) != 0 {
		t.Errorf("groups at the tail's start continuing the last segment's write: %v, want none", got)
	}
}

// Near the head a catch-up takes the tail's writes instead of the smallest
// blocks when that is fewer GETs: a group write of seven generations is one
// group pack, where the block of 41..44 and the increments after it are two
// GETs.
func TestCatchUpTakesTheTailsGroupInsteadOfSmallBlocks(t *testing.T) {
	ctx := context.Background()
	manifest := func(groupFrom uint64) *remote.Manifest {
		t.Helper()
		clock := time.UnixMilli(1_800_000_000_000)
		var next uint64 = 1
		nb := remote.Open(memstore.New(), remote.Options{Now: func() time.Time {
			if groupFrom == 0 || next <= groupFrom {
				clock = clock.Add(time.Second)
			}
			return clock
		}})
		var p proposer
		for ; next <= 47; next++ {
			if _, err := nb.Publish(ctx, p.build); err != nil {
				t.Fatal(err)
			}
		}
		st, err := nb.ReadCurrent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Manifest.Increments[0].Generation > 33 {
			t.Fatalf("the tail starts at %d: the test needs it to list 33 to 47", st.Manifest.Increments[0].Generation)
		}
		return st.Manifest
	}
	want := []remote.PlanItem{{Level: 3, First: 33, Last: 40}, {Level: 2, First: 41, Last: 44}, {Level: 0, First: 45, Last: 47}}

	// 41 to 47 share one time: one write, conditional on 40.
	grouped := manifest(41)
	plan := remote.PlanCatchUpItemsBefore(grouped, 32, 0)
	if !slices.Equal(plan, want) {
		t.Fatalf("the plan of aligned blocks: %+v, want %+v", plan, want)
	}
	cut := remote.CutForTailWrites(grouped, plan, 32)
	if wantCut := []remote.PlanItem{{Level: 3, First: 33, Last: 40}, {Level: 0, First: 41, Last: 47}}; !slices.Equal(cut, wantCut) {
		t.Errorf("with a group write of 41..47: %+v, want %+v", cut, wantCut)
	}
	// Each its own write: the blocks stay.
	singles := manifest(0)
	if cut := remote.CutForTailWrites(singles, remote.PlanCatchUpItemsBefore(singles, 32, 0), 32); !slices.Equal(cut, want) {
		t.Errorf("with single writes: %+v, want the blocks %+v", cut, want)
	}
}
