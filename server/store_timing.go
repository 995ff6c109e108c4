package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Timing estimates learned from the store's own requests. Version 4's
// waiting writers time their reads of `current` from two estimates: one
// conditional write of `current` and one round trip (docs/publication.md
// §5.3). Fixed values cannot fit every store: an object store's 200 ms and
// 20 ms made the waiters of a loopback SeaweedFS, where both take a few
// milliseconds, sleep about a hundred times too long. So, unless
// Config.CondEstimate or RTT set them, the engine measures them:
//
//   - a conditional write is every ReplaceIfMatch or CreateIfAbsent of
//     `current` package publish sends, won or lost (a 412 held the key as
//     long as a win; a 429, answered without writing, is not counted);
//   - a round trip is every GET of `current` (a small object, so its
//     duration is the store's latency, not a transfer).
//
// Errors of any other kind (unreachable, ambiguous, cancelled) say
// nothing about a normal request and are not counted. Each estimate is
// the mean of its first eight samples, then a moving average that gives
// each new sample an eighth (TCP's smoothed round trip), bounded to
// [50 µs, 10 s].
//
// The estimates are a per-store summary in P, beside the store's other
// records (`P/stores/<key>/timing`, keyed by URL and store ID like them),
// so a short-lived process starts from what earlier ones learned. It is a
// hint: missing or damaged, the estimates start from the defaults (the
// file store's local figures, else publish's), and a wrong one only makes
// a waiter read early or late; what is accepted never depends on it.
//
// The clock is publish's (Config.Now), so tests inject durations.

// timingFile is the summary's name in the store's records.
const timingFile = "timing"

// Bounds of a learned estimate.
const (
	minEstimate = 50 * time.Microsecond
	maxEstimate = 10 * time.Second
)

// estimate is one smoothed duration.
type estimate struct {
	mean time.Duration
	n    int // samples taken (counted up to 8: beyond, the average moves)
}

func (a *estimate) add(d time.Duration) {
	d = min(max(d, minEstimate), maxEstimate)
	if a.n < 8 {
		a.n++
		a.mean += (d - a.mean) / time.Duration(a.n)
		return
	}
	a.mean += (d - a.mean) / 8
}

// storeTiming is the engine's learned estimates of its store.
type storeTiming struct {
	mu         sync.Mutex
	defaults   [2]time.Duration // conditional write, round trip
	dir        string           // the records the estimates were loaded from
	cond, rtt  estimate
	sinceSaved int // round trips measured since the last save
}

// newStoreTiming returns the estimator of an engine, or nil when the
// configuration fixes the estimates.
func newStoreTiming(cfg Config) *storeTiming {
	if cfg.CondEstimate != 0 || cfg.RTT != 0 {
		return nil
	}
	o := v4Options(cfg)
	t := &storeTiming{defaults: [2]time.Duration{o.CondEstimate, o.RTT}}
	if t.defaults[0] <= 0 {
		t.defaults[0] = 200 * time.Millisecond // publish's defaults
	}
	if t.defaults[1] <= 0 {
		t.defaults[1] = 20 * time.Millisecond
	}
	return t
}

// load reads the summary kept in dir, once per dir: missing or damaged,
// the estimates start from the defaults.
func (t *storeTiming) load(dir string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dir == dir {
		return
	}
	t.dir, t.sinceSaved = dir, 0
	t.cond, t.rtt = estimate{}, estimate{}
	data, err := os.ReadFile(filepath.Join(dir, timingFile))
	if err != nil {
		return
	}
	var cond, rtt int64
	var nc, nr int
	if _, err := fmt.Sscanf(string(data), "slivingdoc store timing 1\n%d %d %d %d\n", &cond, &nc, &rtt, &nr); err != nil {
		return
	}
	ok := func(d int64, n int) bool {
		return n >= 0 && n <= 8 && (n == 0 || time.Duration(d) >= minEstimate && time.Duration(d) <= maxEstimate)
	}
	if !ok(cond, nc) || !ok(rtt, nr) {
		return
	}
	t.cond, t.rtt = estimate{time.Duration(cond), nc}, estimate{time.Duration(rtt), nr}
}

// estimates returns the conditional-write and round-trip estimates.
func (t *storeTiming) estimates() (cond, rtt time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cond, rtt = t.defaults[0], t.defaults[1]
	if t.cond.n > 0 {
		cond = t.cond.mean
	}
	if t.rtt.n > 0 {
		rtt = t.rtt.mean
	}
	return cond, rtt
}

// record adds one sample and saves the summary: after every conditional
// write (one per fold), and after every eighth round trip.
func (t *storeTiming) record(cond bool, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cond {
		t.cond.add(d)
	} else {
		t.rtt.add(d)
		if t.sinceSaved++; t.sinceSaved < 8 {
			return
		}
	}
	t.sinceSaved = 0
	if t.dir == "" {
		return
	}
	data := fmt.Appendf(nil, "slivingdoc store timing 1\n%d %d %d %d\n", int64(t.cond.mean), t.cond.n, int64(t.rtt.mean), t.rtt.n)
	_ = writeReplace(filepath.Join(t.dir, timingFile), data, false) // a hint
}

// timedStore is the store as publish sees it: every request passes
// through; those of `current` are timed.
type timedStore struct {
	remote.Store
	t   *storeTiming
	now func() time.Time
}

func (s *timedStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	t0 := s.now()
	data, etag, err := s.Store.Get(ctx, key)
	if key == remote.CurrentKey && (err == nil || errors.Is(err, remote.ErrNotFound)) {
		s.t.record(false, s.now().Sub(t0))
	}
	return data, etag, err
}

func (s *timedStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	t0 := s.now()
	out, err := s.Store.ReplaceIfMatch(ctx, key, data, etag)
	s.condDone(key, t0, err)
	return out, err
}

func (s *timedStore) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	t0 := s.now()
	out, err := s.Store.CreateIfAbsent(ctx, key, data)
	s.condDone(key, t0, err)
	return out, err
}

func (s *timedStore) condDone(key string, t0 time.Time, err error) {
	if key == remote.CurrentKey && (err == nil || errors.Is(err, remote.ErrPrecondition)) {
		s.t.record(true, s.now().Sub(t0))
	}
}

// ListAfter keeps the store's own listing after a key (S3's StartAfter).
func (s *timedStore) ListAfter(ctx context.Context, prefix, after string) ([]remote.ObjectInfo, error) {
	return remote.ListAfter(ctx, s.Store, prefix, after)
}

// timedPublishing sets opts' estimates from what was learned of the
// store and returns the store publish should use (timed); with
// configured estimates, the store and opts as they are.
func (e *Engine) timedPublishing(opts *publish.Options) remote.Store {
	t := e.timing
	if t == nil {
		return e.store
	}
	t.load(e.storeDir())
	opts.CondEstimate, opts.RTT = t.estimates()
	return &timedStore{Store: e.store, t: t, now: opts.Clock.Now}
}
