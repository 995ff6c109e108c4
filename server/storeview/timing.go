package storeview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// Timing estimates learned from the store's own requests. Version 4's
// waiting writers time their reads of `current` from two estimates: one
// conditional write of `current` and one round trip (docs/publication.md
// §5.3). Fixed values cannot fit every store: an object store's 200 ms and
// 20 ms made the waiters of a loopback SeaweedFS, where both take a few
// milliseconds, sleep about a hundred times too long. So, unless
// the engine's configuration (server.Config.CondEstimate or RTT) sets
// them, the engine measures them:
//
//   - a conditional write is every ReplaceIfMatch or CreateIfAbsent of
//     `current` package publish sends, won or lost (a 412 held the key as
//     long as a win; a 429, answered without writing, is not counted);
//   - a round trip is every GET of `current` (a small object, so its
//     duration is the store's latency, not a transfer) but a process's
//     first: it opened the connection (and on a real store its TLS),
//     and taken alone it made a CLI writer new to a loaded SeaweedFS
//     wait 7.9 s, from one GET of 265 ms;
//   - a write is every PUT of a `proposals/` key (the call's registration,
//     a fold marker) of at most 64 KiB: it stands in for the conditional write until this
//     writer has made one. A writer whose commits other writers fold never
//     writes `current` itself, and with the default (an object store's
//     200 ms) it waited about a hundred times too long on a store where a
//     write takes a few milliseconds: on a loopback SeaweedFS, 47 of 100
//     commit processes of ten writers took a second each, the others
//     75 ms.
//
// Errors of any other kind (unreachable, ambiguous, cancelled) say
// nothing about a normal request and are not counted. Each estimate is
// the mean of its first eight samples, then a moving average that gives
// each new sample an eighth (TCP's smoothed round trip), bounded to
// [50 µs, 10 s].
//
// The estimates are a per-store summary in P, beside the store's other
// records (`P/stores/<key>/timing`, keyed by URL and store ID like them),
// so a short-lived process starts from what earlier ones learned; publish
// takes the newest estimates after each of its reads of `current` and
// LISTs (publish.Options.Estimates), so even a process new to the store
// waits by what its first requests measured. It is a hint, overwritten
// in place (a sealed record: a save met half done or cut by a crash fails
// its check): missing or damaged, the estimates start from the defaults
// (the file store's local figures, else publish's), and a wrong one only
// makes a waiter read early or late; what is accepted never depends on it.
//
// The clock is publish's (publish.Options.Clock), so tests inject
// durations.

// timingFile is the summary's name in the store's records.
const timingFile = "timing"

// maxTimedWrite is the largest PUT taken as a write's duration.
const maxTimedWrite = 64 << 10

// Bounds of a learned estimate.
const (
	minEstimate = 50 * time.Microsecond
	maxEstimate = 10 * time.Second
)

// estimate is one smoothed duration.
type estimate struct {
	mean  time.Duration
	n     int  // samples taken (counted up to 8: beyond, the average moves)
	fresh bool // a sample was taken by this process (not only loaded from P)
}

// add takes one sample. A store slow for a while (a slow-store fault of
// the chaos campaign: requests of 0.2–1.5 s for a few seconds) left
// round-trip estimates of 1.1–1.3 s in a writer's summary, by which the
// next processes gathered about 11 s and read `current` a cycle (about
// 20 s) apart. So a sample below the estimate counts for more than one
// above it: the first this process takes replaces a loaded estimate, and
// each later one moves it halfway; one above moves it by its share of the
// first eight, then an eighth.
func (a *estimate) add(d time.Duration) {
	d = min(max(d, minEstimate), maxEstimate)
	switch {
	case a.n == 0 || d < a.mean && !a.fresh:
		a.mean = d
	case d < a.mean:
		a.mean += (d - a.mean) / 2
	case a.n < 8:
		a.mean += (d - a.mean) / time.Duration(a.n+1)
	default:
		a.mean += (d - a.mean) / 8
	}
	a.n, a.fresh = min(a.n+1, 8), true
}

// Timing is the engine's learned estimates of its store.
type Timing struct {
	mu         sync.Mutex
	defaults   [2]time.Duration // conditional write, round trip
	dir        string           // the records the estimates were loaded from
	cond, rtt  estimate
	write      estimate      // PUTs of proposals/ keys (the stand-in for cond)
	sinceSaved int           // round trips measured since the last save
	warm       bool          // a GET of `current` was made (the connection is open)
	first      time.Duration // that GET's duration: a round trip takes no longer
}

// NewTiming returns the estimator of an engine whose publication options
// are o (their estimates, when set, are the defaults: the file store's
// local figures), or nil when the configuration fixes the estimates
// (fixed): then nothing is learned.
func NewTiming(o publish.Options, fixed bool) *Timing {
	if fixed {
		return nil
	}
	t := &Timing{defaults: [2]time.Duration{o.CondEstimate, o.RTT}}
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
func (t *Timing) load(dir string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dir == dir {
		return
	}
	t.dir, t.sinceSaved = dir, 0
	t.cond, t.rtt, t.write = estimate{}, estimate{}, estimate{}
	data, err := os.ReadFile(filepath.Join(dir, timingFile))
	if err != nil {
		return
	}
	d, n, ok := parseTiming(data)
	if !ok {
		return
	}
	var e [3]estimate
	for i := range e {
		if n[i] < 0 || n[i] > 8 || n[i] > 0 && (time.Duration(d[i]) < minEstimate || time.Duration(d[i]) > maxEstimate) {
			return
		}
		e[i] = estimate{mean: time.Duration(d[i]), n: n[i]}
	}
	t.cond, t.rtt, t.write = e[0], e[1], e[2]
}

// parseTiming reads a summary: the sealed record of three means and
// sample counts, or one of the older text forms (version 1 had no write
// estimate: read as version 2 without it).
func parseTiming(data []byte) (d [3]int64, n [3]int, ok bool) {
	if f, sealed := pstate.Unseal(data, 6); sealed {
		for i := range d {
			var err1, err2 error
			d[i], err1 = strconv.ParseInt(f[2*i], 10, 64)
			n[i], err2 = strconv.Atoi(f[2*i+1])
			if err1 != nil || err2 != nil {
				return d, n, false
			}
		}
		return d, n, true
	}
	if _, err := fmt.Sscanf(string(data), "slivingdoc store timing 2\n%d %d %d %d %d %d\n", &d[0], &n[0], &d[1], &n[1], &d[2], &n[2]); err == nil {
		return d, n, true
	}
	d[2], n[2] = 0, 0
	if _, err := fmt.Sscanf(string(data), "slivingdoc store timing 1\n%d %d %d %d\n", &d[0], &n[0], &d[1], &n[1]); err == nil {
		return d, n, true
	}
	return d, n, false
}

// timingRecord is the summary as written: a sealed record (pstate.Seal) of
// fixed width, a mean of 20 digits and a count of one (at most 8) per
// estimate, so that each save overwrites the last in place instead of
// creating a file (two per commit: about 150 µs of CPU each on an ext4
// disk that frees inodes often, against 4 µs in place).
func timingRecord(e ...estimate) []byte {
	f := make([]string, 0, 2*len(e))
	for _, x := range e {
		f = append(f, fmt.Sprintf("%020d", int64(x.mean)), strconv.Itoa(x.n))
	}
	return pstate.Seal(f...)
}

// estimates returns the conditional-write and round-trip estimates:
// while none was measured, a conditional write is estimated by this
// store's writes, and a round trip is at most one.
func (t *Timing) estimates() (cond, rtt time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cond, rtt = t.defaults[0], t.defaults[1]
	switch {
	case t.cond.n > 0:
		cond = t.cond.mean
	case t.write.n > 0:
		cond = t.write.mean
	}
	switch {
	case t.rtt.n > 0:
		rtt = t.rtt.mean
	case t.write.n > 0:
		rtt = min(rtt, t.write.mean) // a write takes at least a round trip
	}
	if t.first > 0 && !t.rtt.fresh {
		rtt = min(rtt, t.first) // what this process saw bounds what it loaded
	}
	return cond, rtt
}

// Kinds of sample.
const (
	sampleCond = iota
	sampleRTT
	sampleWrite
)

// record adds one sample and saves the summary: after every conditional
// write (one per fold) and every write (about one per call: so a process
// that never folds still passes on what it learned), and after every
// eighth round trip.
func (t *Timing) record(kind int, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch kind {
	case sampleCond:
		t.cond.add(d)
	case sampleWrite:
		t.write.add(d)
	default:
		if !t.warm {
			t.warm, t.first = true, d
			return
		}
		t.rtt.add(d)
		if t.sinceSaved++; t.sinceSaved < 8 {
			return
		}
	}
	t.sinceSaved = 0
	if t.dir == "" {
		return
	}
	_ = pstate.Overwrite(filepath.Join(t.dir, timingFile), timingRecord(t.cond, t.rtt, t.write)) // a hint
}

// timedStore is the store as publish sees it: every request passes
// through; those of `current` are timed.
type timedStore struct {
	remote.Store
	t   *Timing
	now func() time.Time
}

func (s *timedStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	t0 := s.now()
	data, etag, err := s.Store.Get(ctx, key)
	if key == remote.CurrentKey && (err == nil || errors.Is(err, remote.ErrNotFound)) {
		s.t.record(sampleRTT, s.now().Sub(t0))
	}
	return data, etag, err
}

func (s *timedStore) Put(ctx context.Context, key string, data []byte) error {
	t0 := s.now()
	err := s.Store.Put(ctx, key, data)
	// A large proposal's PUT is mostly its transfer, not the write.
	if err == nil && strings.HasPrefix(key, remote.ProposalsPrefix) && len(data) <= maxTimedWrite {
		s.t.record(sampleWrite, s.now().Sub(t0))
	}
	return err
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
		s.t.record(sampleCond, s.now().Sub(t0))
	}
}

// ListAfter keeps the store's own listing after a key (S3's StartAfter).
func (s *timedStore) ListAfter(ctx context.Context, prefix, after string) ([]remote.ObjectInfo, error) {
	return remote.ListAfter(ctx, s.Store, prefix, after)
}

// Timed sets opts' estimates from what was learned of the store s, whose
// records are in dir (P/stores/<key>), and returns the store publish
// should use (timed); with configured estimates (t nil), s and opts as
// they are.
func (t *Timing) Timed(opts *publish.Options, s remote.Store, dir string) remote.Store {
	if t == nil {
		return s
	}
	t.load(dir)
	opts.CondEstimate, opts.RTT = t.estimates()
	opts.Estimates = t.estimates
	return &timedStore{Store: s, t: t, now: opts.Clock.Now}
}
