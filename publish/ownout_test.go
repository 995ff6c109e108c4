package publish

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
)

// simClock runs writers that are goroutines one at a time in model time:
// a writer's Wait parks it, and once every writer is parked the earliest
// deadline runs (ties: the lower writer, then the earlier wait). Store
// requests wait their model duration on it (simStore), so the order of
// every request, and what each writer sees, follows from the durations
// alone: no real time, no scheduler's whim.
type simClock struct {
	mu      sync.Mutex
	now     time.Time
	running int // writers not parked (set to their number before they start)
	seq     int
	parked  []*simWaiter
}

type simWaiter struct {
	at       time.Time
	who, seq int
	wake     chan struct{}
}

// simWho is the context key of the writer a Wait belongs to.
type simWho struct{}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) Wait(ctx context.Context, d time.Duration) error {
	who, _ := ctx.Value(simWho{}).(int)
	c.mu.Lock()
	c.seq++
	w := &simWaiter{at: c.now.Add(max(d, 0)), who: who, seq: c.seq, wake: make(chan struct{})}
	c.parked = append(c.parked, w)
	c.running--
	c.next()
	c.mu.Unlock()
	<-w.wake
	return ctx.Err()
}

// done: a writer ended.
func (c *simClock) done() {
	c.mu.Lock()
	c.running--
	c.next()
	c.mu.Unlock()
}

// next wakes the earliest parked writer once none runs (c.mu held).
func (c *simClock) next() {
	if c.running > 0 || len(c.parked) == 0 {
		return
	}
	i := 0
	for j, w := range c.parked {
		if b := c.parked[i]; w.at.Before(b.at) || w.at.Equal(b.at) && (w.who < b.who || w.who == b.who && w.seq < b.seq) {
			i = j
		}
	}
	w := c.parked[i]
	c.parked = slices.Delete(c.parked, i, i+1)
	c.now = later(c.now, w.at)
	c.running++
	close(w.wake)
}

// simStore is one writer's store: every request takes a round trip, a
// conditional write of `current` a conditional-write time, and is
// counted.
type simStore struct {
	remote.Store
	c         *simClock
	rtt, cond time.Duration
	n         int
}

func (s *simStore) wait(ctx context.Context, d time.Duration) {
	s.n++
	_ = s.c.Wait(ctx, d)
}

func (s *simStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	s.wait(ctx, s.rtt)
	return s.Store.Get(ctx, key)
}

func (s *simStore) Put(ctx context.Context, key string, data []byte) error {
	s.wait(ctx, s.rtt)
	return s.Store.Put(ctx, key, data)
}

func (s *simStore) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	s.wait(ctx, s.rtt)
	return s.Store.List(ctx, prefix)
}

func (s *simStore) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	s.wait(ctx, s.cond)
	return s.Store.CreateIfAbsent(ctx, key, data)
}

func (s *simStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	s.wait(ctx, s.cond)
	return s.Store.ReplaceIfMatch(ctx, key, data, etag)
}

// simCall is one writer's commit in a simulation, and how it went.
type simCall struct {
	start time.Duration // after the simulation's start
	files map[string]*string

	id      string
	r       Result
	err     error
	took    time.Duration
	reqs    int
	publish *Publisher
	store   *simStore
}

// simulate runs calls concurrently on e's store in model time, requests
// of 20 ms and conditional writes of cond (the writers' estimates).
func simulate(t *testing.T, e *env, cond time.Duration, calls []*simCall) {
	t.Helper()
	c := &simClock{now: e.clock.now.Add(10 * time.Second), running: len(calls)}
	t0 := c.now
	for _, sc := range calls {
		sc.id = e.id()
		sc.store = &simStore{Store: e.mem, c: c, rtt: 20 * time.Millisecond, cond: cond}
		var err error
		sc.publish, err = New(sc.store, Options{Store: storeID, Clock: c, Objects: allPacks(e.mem), Parallel: 1, CondEstimate: cond,
			Jitter: func() float64 { return 0.5 },
			Trace:  func(s string) { t.Logf("%v %s", c.now.Sub(t0), s) }})
		if err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i, sc := range calls {
		wg.Go(func() {
			defer c.done()
			ctx := context.WithValue(context.Background(), simWho{}, i)
			_ = c.Wait(ctx, sc.start)
			sc.r, sc.err = sc.publish.Commit(ctx, sc.id, change(allPacks(e.mem), sc.id, sc.files))
			sc.took, sc.reqs = c.Now().Sub(t0)-sc.start, sc.store.n
		})
	}
	wg.Wait()
}

// The first in the fold order finds that its own version does not merge
// onto `current` (a write that it missed changed the same line): its
// write declines its version and accepts the others', which merge, and
// then it rebuilds its own. When it rebuilt first, its new version (keyed
// by the newer generation) sorted after the others, whose proposers still
// waited for its old one, neither accepted nor declined: nobody folded
// until the stall takeover. At 200 ms per conditional write b and c were
// accepted after 2.57 and 2.61 s of model time, 33 requests each, most
// of them polls of `current` (a after 2.62 s, 37 requests); at 1 s,
// after 7.59 and 7.63 s, 28 requests each (a: 7.59 s, 34). Now b and c
// are accepted by a's first write, after 750 ms (2.40 s at 1 s) and 5
// requests, before any takeover could fire, and a by its second, after
// 1.1 s (3.54 s) and 15 requests.
func TestTheFirstFoldersOwnVersionOutDoesNotHoldTheOthers(t *testing.T) {
	for _, cond := range []time.Duration{200 * time.Millisecond, time.Second} {
		t.Run(cond.String(), func(t *testing.T) { firstFoldersOwnVersionOut(t, cond) })
	}
}

func firstFoldersOwnVersionOut(t *testing.T, cond time.Duration) {
	e := newEnv(t, nil)
	e.commit(map[string]*string{"shared.md": str("x\nb\nc\n")})
	// d commits first and alone: generation 2 rewrites line 1. a, b
	// and c read generation 1 before that write lands and register on
	// it after d's LIST: a, first in the fold order of their LISTs,
	// rewrites line 1 too.
	d := &simCall{files: map[string]*string{"shared.md": str("d\nb\nc\n")}}
	a := &simCall{start: 30 * time.Millisecond, files: map[string]*string{"shared.md": str("a\nb\nc\n")}}
	b := &simCall{start: 30 * time.Millisecond, files: map[string]*string{"b.md": str("b\n")}}
	c := &simCall{start: 30 * time.Millisecond, files: map[string]*string{"c.md": str("c\n")}}
	simulate(t, e, cond, []*simCall{d, a, b, c})
	for _, sc := range []*simCall{d, a, b, c} {
		if sc.err != nil {
			t.Fatal(sc.err)
		}
		t.Logf("%s: generation %d after %v, %d requests", sc.id[len(sc.id)-4:], sc.r.Generation, sc.took, sc.reqs)
	}
	m := e.current()
	if d.r.Generation != 2 || !m.IsDeclined(1, a.id) {
		t.Errorf("d at %d, a's version on 1 declined: %v (%+v)", d.r.Generation, m.IsDeclined(1, a.id), m.Declined)
	}
	// Before any takeover could fire: Stall (4) estimates and a second.
	stall := 4*cond + time.Second
	for _, sc := range []*simCall{b, c} {
		if sc.r.Generation > 4 || sc.took >= stall || sc.reqs > 6 {
			t.Errorf("%s: generation %d after %v and %d requests: want 3 or 4, by a's write, within %v",
				sc.id[len(sc.id)-4:], sc.r.Generation, sc.took, sc.reqs, stall)
		}
	}
	if a.r.Generation != 5 || a.reqs > 16 {
		t.Errorf("a: generation %d after %d requests: want 5, rebuilt after its write", a.r.Generation, a.reqs)
	}
	if got := e.files(m.Head); got["shared.md"] != "a\nb\nc\n" || got["b.md"] != "b\n" || got["c.md"] != "c\n" {
		t.Fatalf("tree %v", got)
	}
}
