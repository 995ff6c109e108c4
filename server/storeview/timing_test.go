package storeview

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
)

// manualClock is a clock a test moves by hand.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// slowStore is a store whose requests take the durations the test sets,
// on a manual clock, and whose next requests can fail.
type slowStore struct {
	remote.Store
	clock     *manualClock
	get, cond time.Duration
	fail      error
}

func (s *slowStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	s.clock.advance(s.get)
	return s.Store.Get(ctx, key)
}

func (s *slowStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	s.clock.advance(s.cond)
	if s.fail != nil {
		return "", s.fail
	}
	return s.Store.ReplaceIfMatch(ctx, key, data, etag)
}

// The estimates follow the durations of the store's own requests of
// `current`: conditional writes won or lost, GETs; other requests and
// failures are not counted; they persist in P for the next process, and
// a missing or damaged record means the defaults.
func TestStoreTimingLearnsFromTheStoresRequests(t *testing.T) {
	ctx := context.Background()
	clock := &manualClock{t: time.Unix(1_800_000_000, 0)}
	mem := memstore.New()
	store := &slowStore{Store: mem, clock: clock}
	dir := t.TempDir()
	timing := NewTiming(publish.Options{}, false)
	timing.load(dir)
	if c, r := timing.estimates(); c != 200*time.Millisecond || r != 20*time.Millisecond {
		t.Fatalf("defaults: %v %v", c, r)
	}
	ts := &timedStore{Store: store, t: timing, now: clock.Now}

	store.get = 3 * time.Millisecond
	for range 20 {
		_, _, _ = ts.Get(ctx, remote.CurrentKey) // absent: still a round trip
	}
	store.get = 500 * time.Millisecond
	for range 5 {
		_, _, _ = ts.Get(ctx, "packs/big.pack") // a transfer, not counted
	}
	etag, err := mem.CreateIfAbsent(ctx, remote.CurrentKey, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	store.cond = 10 * time.Millisecond
	for i := range 8 {
		tag := etag
		if i%2 == 1 {
			tag = "stale" // lost: 412, which held the key as long
		}
		if got, err := ts.ReplaceIfMatch(ctx, remote.CurrentKey, []byte("x"), tag); err == nil {
			etag = got
		} else if !errors.Is(err, remote.ErrPrecondition) {
			t.Fatal(err)
		}
	}
	if c, r := timing.estimates(); c != 10*time.Millisecond || r != 3*time.Millisecond {
		t.Fatalf("learned: %v %v, want 10ms 3ms", c, r)
	}
	store.cond, store.fail = 5*time.Second, remote.ErrUnavailable
	_, _ = ts.ReplaceIfMatch(ctx, remote.CurrentKey, []byte("x"), etag)
	store.fail = remote.ErrRateLimited
	_, _ = ts.ReplaceIfMatch(ctx, remote.CurrentKey, []byte("x"), etag)
	if c, _ := timing.estimates(); c != 10*time.Millisecond {
		t.Fatalf("a failure counted: %v", c)
	}
	// Past eight samples the average moves by an eighth of each.
	store.cond, store.fail = 2*time.Millisecond, nil
	for range 16 {
		if got, err := ts.ReplaceIfMatch(ctx, remote.CurrentKey, []byte("x"), etag); err == nil {
			etag = got
		}
	}
	c, r := timing.estimates()
	if c < 2*time.Millisecond || c > 3*time.Millisecond {
		t.Fatalf("after 16 writes of 2ms: %v", c)
	}

	// The next process starts from what this one learned.
	next := NewTiming(publish.Options{}, false)
	next.load(dir)
	if c2, r2 := next.estimates(); c2 != c || r2 != r {
		t.Fatalf("reloaded: %v %v, want %v %v", c2, r2, c, r)
	}
	// A damaged record is no record.
	if err := os.WriteFile(filepath.Join(dir, timingFile), []byte("slivingdoc store timing 1\n-5 3 x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	damaged := NewTiming(publish.Options{}, false)
	damaged.load(dir)
	if c, r := damaged.estimates(); c != 200*time.Millisecond || r != 20*time.Millisecond {
		t.Fatalf("damaged record: %v %v", c, r)
	}
	// Configured estimates are not learned.
	if NewTiming(publish.Options{CondEstimate: time.Millisecond}, true) != nil {
		t.Fatal("configured estimates are learned")
	}
}

// slowPutStore is a store whose PUTs take the duration the test sets, on
// a manual clock.
type slowPutStore struct {
	remote.Store
	clock *manualClock
	put   time.Duration
}

func (s *slowPutStore) Put(ctx context.Context, key string, data []byte) error {
	s.clock.advance(s.put)
	return s.Store.Put(ctx, key, data)
}

// A writer that never writes `current` itself (its commits folded by
// others) still learns the store: its writes of proposals stand in for
// the conditional write, and bound the round trip while none is measured.
// A process's first GET of `current` opened the connection and is not a
// round trip. What it learned reaches the next process, and a summary of
// version 1 (no writes) is still read.
func TestStoreTimingWithoutAConditionalWrite(t *testing.T) {
	ctx := context.Background()
	clock := &manualClock{t: time.Unix(1_800_000_000, 0)}
	mem := memstore.New()
	store := &slowPutStore{Store: &slowStore{Store: mem, clock: clock}, clock: clock}
	dir := t.TempDir()
	timing := NewTiming(publish.Options{}, false)
	timing.load(dir)
	ts := &timedStore{Store: store, t: timing, now: clock.Now}

	store.Store.(*slowStore).get = 300 * time.Millisecond
	_, _, _ = ts.Get(ctx, remote.CurrentKey) // the connection's first
	if c, r := timing.estimates(); c != 200*time.Millisecond || r != 20*time.Millisecond {
		t.Fatalf("after the first GET: %v %v, want the defaults", c, r)
	}
	store.put = 4 * time.Millisecond
	if err := ts.Put(ctx, remote.ProposalKey(1, "01900000-0000-7000-8000-000000000001"), []byte("p")); err != nil {
		t.Fatal(err)
	}
	store.put = time.Second
	if err := ts.Put(ctx, "packs/groups/x.pack", []byte("g")); err != nil { // not a proposal: not counted
		t.Fatal(err)
	}
	if err := ts.Put(ctx, remote.ProposalKey(1, "01900000-0000-7000-8000-000000000002"), make([]byte, maxTimedWrite+1)); err != nil {
		t.Fatal(err) // a transfer: not counted
	}
	if c, r := timing.estimates(); c != 4*time.Millisecond || r != 4*time.Millisecond {
		t.Fatalf("after one write of 4ms: %v %v, want 4ms 4ms", c, r)
	}
	store.Store.(*slowStore).get = time.Millisecond
	_, _, _ = ts.Get(ctx, remote.CurrentKey)
	if c, r := timing.estimates(); c != 4*time.Millisecond || r != time.Millisecond {
		t.Fatalf("after a round trip of 1ms: %v %v, want 4ms 1ms", c, r)
	}
	// Saved after the write: the next process starts from it.
	next := NewTiming(publish.Options{}, false)
	next.load(dir)
	if c, _ := next.estimates(); c != 4*time.Millisecond {
		t.Fatalf("reloaded: %v, want 4ms", c)
	}
	// A summary of version 1 (before writes were measured).
	if err := os.WriteFile(filepath.Join(dir, timingFile), []byte("slivingdoc store timing 1\n3000000 8 1000000 8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v1 := NewTiming(publish.Options{}, false)
	v1.load(dir)
	if c, r := v1.estimates(); c != 3*time.Millisecond || r != time.Millisecond {
		t.Fatalf("version 1 summary: %v %v", c, r)
	}
}

// A writer whose summary was learned while the store was slow (the chaos
// campaign's slow-store fault left round trips of 1.1–1.3 s in P) waits
// by what its own process sees: its first GET of `current`, connection
// included, bounds the round trip; its first sample below a loaded
// estimate replaces it; and later, a slow sample moves an estimate by an
// eighth, a fast one by half.
func TestStoreTimingRecoversFromASlowStore(t *testing.T) {
	ctx := context.Background()
	clock := &manualClock{t: time.Unix(1_800_000_000, 0)}
	mem := memstore.New()
	store := &slowStore{Store: mem, clock: clock}
	dir := t.TempDir()
	slow := "slivingdoc store timing 2\n2000000000 8 1200000000 8 900000000 8\n"
	if err := os.WriteFile(filepath.Join(dir, timingFile), []byte(slow), 0o600); err != nil {
		t.Fatal(err)
	}
	timing := NewTiming(publish.Options{}, false)
	timing.load(dir)
	if c, r := timing.estimates(); c != 2*time.Second || r != 1200*time.Millisecond {
		t.Fatalf("loaded: %v %v", c, r)
	}
	ts := &timedStore{Store: store, t: timing, now: clock.Now}
	store.get = 3 * time.Millisecond
	_, _, _ = ts.Get(ctx, remote.CurrentKey)
	if _, r := timing.estimates(); r != 3*time.Millisecond {
		t.Fatalf("after a first GET of 3ms the round trip is %v", r)
	}
	etag, err := mem.CreateIfAbsent(ctx, remote.CurrentKey, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	store.cond = 4 * time.Millisecond
	if _, err = ts.ReplaceIfMatch(ctx, remote.CurrentKey, []byte("x"), etag); err != nil {
		t.Fatal(err)
	}
	if c, _ := timing.estimates(); c != 4*time.Millisecond {
		t.Fatalf("after a conditional write of 4ms: %v", c)
	}
	_, _, _ = ts.Get(ctx, remote.CurrentKey)
	store.get = 803 * time.Millisecond
	_, _, _ = ts.Get(ctx, remote.CurrentKey)
	if _, r := timing.estimates(); r != 103*time.Millisecond {
		t.Fatalf("3ms, then a slow round trip of 803ms: %v, want 103ms", r)
	}
	store.get = 3 * time.Millisecond
	_, _, _ = ts.Get(ctx, remote.CurrentKey)
	if _, r := timing.estimates(); r != 53*time.Millisecond {
		t.Fatalf("then one of 3ms: %v, want 53ms", r)
	}
}

// The store's timing summary is rewritten in place (two saves per commit),
// reads back, and a torn one reads as none: the defaults.
func TestTimingRecordInPlace(t *testing.T) {
	dir := t.TempDir()
	timing := NewTiming(publish.Options{}, false)
	timing.load(dir)
	timing.record(sampleCond, 3*time.Millisecond)
	path := filepath.Join(dir, timingFile)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	timing.record(sampleWrite, 2*time.Millisecond)
	timing.record(sampleCond, 5*time.Millisecond)
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Fatalf("the summary was replaced, not rewritten in place (%v)", err)
	}
	next := NewTiming(publish.Options{}, false)
	next.load(dir)
	if next.cond != (estimate{mean: timing.cond.mean, n: 2}) || next.write != (estimate{mean: 2 * time.Millisecond, n: 1}) {
		t.Fatalf("reloaded %+v %+v, saved %+v %+v", next.cond, next.write, timing.cond, timing.write)
	}
	data, _ := os.ReadFile(path)
	torn := append([]byte(nil), data...)
	copy(torn[:19], timingRecord(estimate{mean: 9 * time.Second, n: 8})[:19])
	if err := os.WriteFile(path, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	damaged := NewTiming(publish.Options{}, false)
	damaged.load(dir)
	if c, r := damaged.estimates(); c != 200*time.Millisecond || r != 20*time.Millisecond {
		t.Fatalf("torn summary %q read: %v %v", torn, c, r)
	}
}
