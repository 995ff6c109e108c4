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
	b := breakdown(cs, ls, nil, 0, 3*s, 0)
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

// The tail is told against the agent's previous commit: a slow commit
// queued behind a previous one of two cycles, whose registration came
// before the last LIST of the next write (so that write took it).
func TestTheTailIsToldAgainstThePreviousCommit(t *testing.T) {
	ms := time.Millisecond
	ls := []landing{
		{sent: 0, at: 1000 * ms, first: 1, last: 10},
		{sent: 1300 * ms, at: 2300 * ms, first: 11, last: 20},
		{sent: 2600 * ms, at: 3600 * ms, first: 21, last: 30},
	}
	folder := func(list time.Duration, gen uint64, sent time.Duration) []span {
		return []span{{kind: reqList, start: list, end: list + 20*ms}, {kind: reqWrite, start: sent, end: sent + 1000*ms, gen: gen}}
	}
	cs := []commitTimes{
		// registered during the first write's flight: two cycles, 2,150 ms
		{instant: 200 * ms, start: 200 * ms, registered: 250 * ms, learned: 2350 * ms, gen: 15, measured: true, agent: 7},
		// its instant 400 ms later: queued 1,750 ms, registered before the
		// third write's last LIST, taken by it: 3,060 ms
		{instant: 600 * ms, start: 2350 * ms, registered: 2400 * ms, learned: 3660 * ms, gen: 25, measured: true, agent: 7},
	}
	reqs := [][]span{folder(1200*ms, 20, 1300*ms), folder(2500*ms, 30, 2600*ms)}
	tl := tails(cs, ls, reqs, 3*time.Second)[0]
	if tl.N != 1 || tl.Queued != 1 || tl.Queue != 1750*ms || tl.Gap != 400*ms || tl.PrevLat != 2150*ms || tl.PrevTwo != 1 {
		t.Fatalf("%+v", tl)
	}
	if tl.Missed != 0 || tl.Made != 1 || tl.ToLast != -100*ms || tl.Reg != 100*ms || tl.Cycles != [4]int{0, 1, 0, 0} {
		t.Fatalf("against the LISTs: %+v", tl)
	}
}

// The turn is split by the requests of the next write's folder: its
// read of the landing, the gather's LIST, the rounds, the last LIST, the
// fold of what it added, the uploads; the parts add up to the turn.
func TestTheTurnIsSplitByTheFoldersRequests(t *testing.T) {
	ms := time.Millisecond
	ls := []landing{{sent: 0, at: 1000 * ms, first: 1, last: 10}, {sent: 1300 * ms, at: 2300 * ms, first: 11, last: 20}}
	folder := []span{
		{kind: reqCurrent, start: 1010 * ms, end: 1030 * ms},
		{kind: reqList, start: 1030 * ms, end: 1050 * ms},
		{kind: reqGet, start: 1050 * ms, end: 1070 * ms},
		{kind: reqList, start: 1180 * ms, end: 1200 * ms}, // the gather's (its end: 0 + 1,180 ms)
		{kind: reqGet, start: 1200 * ms, end: 1220 * ms},
		{kind: reqList, start: 1230 * ms, end: 1250 * ms}, // one round
		{kind: reqGet, start: 1250 * ms, end: 1270 * ms},
		{kind: reqUpload, start: 1275 * ms, end: 1295 * ms},
		{kind: reqWrite, start: 1300 * ms, end: 2310 * ms, gen: 20},
	}
	cs := []commitTimes{
		{registered: 1100 * ms, measured: true}, {registered: 1210 * ms, measured: true}, {registered: 1240 * ms, measured: true},
	}
	p := turnParts(ls, [][]span{nil, folder}, cs, 0, 1180*ms)
	if p.N != 1 || p.Learned != 30*ms || p.Gather != 180*ms || p.Rounds != 50*ms || p.Lists != 1 ||
		p.LastList != 20*ms || p.Fold != 25*ms || p.Gets != 1 || p.Uploads != 20*ms || p.Send != 5*ms {
		t.Fatalf("%+v", p)
	}
	if p.Gather+p.Rounds+p.LastList+p.Fold+p.Uploads+p.Send != ls[1].sent-ls[0].at {
		t.Fatalf("the parts do not add up to the turn: %+v", p)
	}
	if p.InGather != 1 || p.InRounds != 1 || p.After != 1 {
		t.Fatalf("registrations against the LISTs: %+v", p)
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
