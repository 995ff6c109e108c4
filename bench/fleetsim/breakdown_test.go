package fleetsim

import (
	"context"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A commit's cycles are the writes of `current` that landed between its
// registration and the landing of the write that accepted it, and its
// phases add up to its latency.
func TestBreakdownCountsTheCyclesACommitSpans(t *testing.T) {
	s := time.Second
	ls := []landing{
		{sent: 0, at: s, first: 2, last: 10},
		{sent: 1100 * time.Millisecond, at: 2100 * time.Millisecond, first: 11, last: 20},
		{sent: 2300 * time.Millisecond, at: 3300 * time.Millisecond, first: 21, last: 30},
	}
	cs := []commitTimes{
		// registered after the first landing, accepted by the second: one cycle
		{instant: 1000 * time.Millisecond, start: 1000 * time.Millisecond, registered: 1050 * time.Millisecond, learned: 2150 * time.Millisecond, gen: 12, measured: true},
		// queued 1 s, registered during the second write's flight, accepted by the third: two
		{instant: 500 * time.Millisecond, start: 1500 * time.Millisecond, registered: 1600 * time.Millisecond, learned: 3500 * time.Millisecond, gen: 25, measured: true},
		// registered before the first write was sent, accepted by the third: three, missed by the second
		{instant: 0, start: 0, registered: -100 * time.Millisecond, learned: 3400 * time.Millisecond, gen: 30, measured: true},
		{instant: 0, start: 0, registered: 0, learned: s, gen: 5, measured: false},
	}
	b := breakdown(cs, ls, 0, 3*s)
	if b.All.N != 3 || b.All.Cycles != [4]int{0, 1, 1, 1} || b.All.Queued != 1 || b.All.Missed != 1 {
		t.Fatalf("all: %+v", b.All)
	}
	if b.Slows.N != 1 || b.Slows.Cycles != [4]int{0, 0, 0, 1} {
		t.Fatalf("slower than 3 s: %+v", b.Slows)
	}
	if got, want := b.All.Queue+b.All.Prologue+b.All.Fold+b.All.Learn, (1150+3000+3400)*time.Millisecond/3; (got - want).Abs() > time.Microsecond {
		t.Fatalf("phases add up to %v, want the mean latency %v", got, want)
	}
	if b.Cycle.N != 2 || b.Cycle.Mean != 1150*time.Millisecond || b.Group != 10 || b.Turn.Mean != 150*time.Millisecond {
		t.Fatalf("cycle %+v, group %v", b.Cycle, b.Group)
	}
}

// The latency model and an agent's view of it list as S3's StartAfter
// does: one request for the keys after the given one, not a listing of
// every proposal of the run.
func TestTheWindowIsListedAfterItsStart(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	l := NewLatency(mem, Model{RTT: time.Millisecond}, 1)
	for _, k := range []string{"proposals/a", "proposals/b", "proposals/c"} {
		if err := l.Put(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
	}
	l.Enable(true)
	for _, s := range []remote.Store{l, agentStore{Store: l, a: &v4agent{}}} {
		if _, ok := s.(remote.ListerAfter); !ok {
			t.Fatalf("%T lists every key of the prefix", s)
		}
		got, err := remote.ListAfter(ctx, s, "proposals/", "proposals/a")
		if err != nil || len(got) != 2 || got[0].Key != "proposals/b" {
			t.Fatalf("%T: %v, %v", s, got, err)
		}
	}
	if c := l.Take(); c.Requests[KindList] != 2 || c.BytesDown != 2*2*64 {
		t.Fatalf("counted %d LISTs, %d bytes down", c.Requests[KindList], c.BytesDown)
	}
}
