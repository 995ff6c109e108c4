package fleetsim

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/bench"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Model is the latency of the simulated store, in the model's time.
type Model struct {
	RTT time.Duration // round trip of every request (half up, half down)
	// Jitter spreads each leg uniformly over [1-Jitter, 1+Jitter] of its
	// nominal time (0..1; 0 = none).
	Jitter float64
	// CondService is how long one conditional write holds its key: the
	// store applies conditional writes of one key one at a time.
	CondService time.Duration
	// Bandwidth is the bytes per second one request moves (0 = unlimited):
	// the body's transfer time is added to the leg that carries it.
	Bandwidth int64
	// Scale compresses time: sleeps are the modelled durations divided by
	// Scale (> 1: faster than real; below 1: slow motion; 0 = 1).
	Scale float64
}

// Kind is a request kind as a store bills it.
type Kind int

const (
	KindGet Kind = iota
	KindHead
	KindPut
	KindCreate  // conditional create (If-None-Match: *)
	KindReplace // conditional replace (If-Match)
	KindList
	KindDelete
	numKinds
)

var kindNames = [numKinds]string{"GET", "HEAD", "PUT", "CREATE", "REPLACE", "LIST", "DELETE"}

func (k Kind) String() string { return kindNames[k] }

// Counts is the traffic a Latency store saw.
type Counts struct {
	Requests [numKinds]int64
	// Lost counts conditional writes refused by their condition (a lost
	// race); Won those that succeeded. Both by kind (Create, Replace).
	Lost, Won [numKinds]int64
	// WonCurrent is the successful conditional replaces of `current`: the
	// publications.
	WonCurrent  int64
	BytesUp     int64
	BytesDown   int64
	CurrentGets int64 // GETs of `current` (the rest are packs)
	// ByClass counts requests by "KIND class" (KeyClass), a GET that
	// found nothing also as "GET class (absent)": where the requests go.
	ByClass map[string]int64
}

// KeyClass names the kind of object a key holds.
func KeyClass(key string) string {
	switch {
	case key == remote.CurrentKey:
		return "current"
	case strings.HasPrefix(key, remote.IncrementsPrefix):
		return "increment"
	case strings.HasPrefix(key, remote.RollupsPrefix):
		return "rollup"
	case strings.HasPrefix(key, remote.CheckpointsPrefix):
		return "checkpoint"
	case strings.HasPrefix(key, remote.SegmentsPrefix):
		return "segment"
	case strings.HasPrefix(key, remote.ProposalsPrefix) && strings.HasSuffix(key, "-lead"):
		return "lead marker"
	case strings.HasPrefix(key, remote.ProposalsPrefix):
		return "proposal"
	case strings.HasPrefix(key, remote.GroupsPrefix):
		return "group pack"
	}
	return "other"
}

// Total is the number of requests of every kind.
func (c Counts) Total() int64 {
	var n int64
	for _, v := range c.Requests {
		n += v
	}
	return n
}

// S3Dollars is what the requests cost at S3 Standard request prices:
// conditional creates and replaces are PUTs; DELETE is free.
func (c Counts) S3Dollars() float64 {
	method := [numKinds]string{KindGet: "GET", KindHead: "HEAD", KindPut: "PUT", KindCreate: "PUT", KindReplace: "PUT", KindList: "LIST", KindDelete: "DELETE"}
	var d float64
	for k, n := range c.Requests {
		d += float64(n) * bench.S3RequestDollars(method[k])
	}
	return d
}

// Conditional is the number of conditional writes, won and lost.
func (c Counts) Conditional() int64 { return c.Requests[KindCreate] + c.Requests[KindReplace] }

// Latency wraps a store with the latency Model and counts what it serves.
// Until Enable(true) it neither sleeps nor counts (set-up).
type Latency struct {
	inner remote.Store
	model Model
	on    atomic.Bool

	rngMu sync.Mutex
	rng   *rand.Rand

	keyMu sync.Mutex
	keys  map[string]*sync.Mutex // one per key written conditionally

	mu sync.Mutex
	c  Counts

	// onWrite, when set, is told of every conditional write the store
	// applies (while it holds the key: the instant it lands), with the
	// instant it was sent (Config.Breakdown).
	onWrite func(key string, data []byte, sent time.Time)
}

// NewLatency wraps inner; seed drives the jitter.
func NewLatency(inner remote.Store, m Model, seed uint64) *Latency {
	if m.Scale <= 0 {
		m.Scale = 1
	}
	return &Latency{inner: inner, model: m, rng: rand.New(rand.NewPCG(seed, 0x1a7e)), keys: map[string]*sync.Mutex{}}
}

// Enable turns the model and the counting on or off.
func (l *Latency) Enable(on bool) { l.on.Store(on) }

// Take returns the counts so far and resets them.
func (l *Latency) Take() Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.c
	l.c = Counts{}
	return c
}

// leg sleeps half a round trip (jittered) plus the transfer of n bytes.
func (l *Latency) leg(ctx context.Context, n int) error {
	m := l.model
	d := float64(m.RTT) / 2
	if m.Jitter > 0 {
		l.rngMu.Lock()
		d *= 1 - m.Jitter + 2*m.Jitter*l.rng.Float64()
		l.rngMu.Unlock()
	}
	if m.Bandwidth > 0 && n > 0 {
		d += float64(n) / float64(m.Bandwidth) * float64(time.Second)
	}
	return l.sleep(ctx, time.Duration(d))
}

func (l *Latency) sleep(ctx context.Context, model time.Duration) error {
	d := time.Duration(float64(model) / l.model.Scale)
	if d <= 0 {
		return ctx.Err()
	}
	return sleepFor(ctx, d)
}

func (l *Latency) keyLock(key string) *sync.Mutex {
	l.keyMu.Lock()
	defer l.keyMu.Unlock()
	m := l.keys[key]
	if m == nil {
		m = &sync.Mutex{}
		l.keys[key] = m
	}
	return m
}

// do runs one request: up leg (carrying up bytes), the store's work (one
// at a time per key for conditional writes), down leg (carrying what
// apply returns). A context cancelled on a leg fails the request as an
// interrupted network call would: before the server saw it on the up leg,
// after it on the down leg (the write stands; the caller cannot know —
// the engine's ambiguity handling is exercised, as with a real store).
func (l *Latency) do(ctx context.Context, k Kind, key string, up int, apply func() (down int, err error)) error {
	on := l.on.Load()
	if !on {
		_, err := apply()
		return err
	}
	if err := l.leg(ctx, up); err != nil {
		return err
	}
	var down int
	var err error
	if k == KindCreate || k == KindReplace {
		m := l.keyLock(key)
		m.Lock()
		serr := l.sleep(ctx, l.model.CondService)
		if serr == nil {
			down, err = apply()
		}
		m.Unlock()
		if serr != nil {
			return serr
		}
	} else {
		down, err = apply()
	}
	l.count(k, key, up, down, err)
	if lerr := l.leg(ctx, down); lerr != nil && err == nil {
		return errors.Join(remote.ErrAmbiguous, lerr)
	}
	return err
}

func (l *Latency) count(k Kind, key string, up, down int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.c.Requests[k]++
	l.c.BytesUp += int64(up)
	l.c.BytesDown += int64(down)
	if k == KindGet && key == remote.CurrentKey {
		l.c.CurrentGets++
	}
	if l.c.ByClass == nil {
		l.c.ByClass = map[string]int64{}
	}
	class := k.String() + " " + KeyClass(key)
	l.c.ByClass[class]++
	if errors.Is(err, remote.ErrNotFound) {
		l.c.ByClass[class+" (absent)"]++
	}
	if k == KindCreate || k == KindReplace {
		switch {
		case err == nil:
			l.c.Won[k]++
			if k == KindReplace && key == remote.CurrentKey {
				l.c.WonCurrent++
			}
		case errors.Is(err, remote.ErrPrecondition):
			l.c.Lost[k]++
		}
	}
}

// Identity implements remote.Store.
func (l *Latency) Identity() string { return l.inner.Identity() }

// Get implements remote.Store.
func (l *Latency) Get(ctx context.Context, key string) (data []byte, etag string, err error) {
	err = l.do(ctx, KindGet, key, 0, func() (int, error) {
		var e error
		data, etag, e = l.inner.Get(ctx, key)
		return len(data), e
	})
	return data, etag, err
}

// Head implements remote.Store.
func (l *Latency) Head(ctx context.Context, key string) (info remote.ObjectInfo, err error) {
	err = l.do(ctx, KindHead, key, 0, func() (int, error) {
		var e error
		info, e = l.inner.Head(ctx, key)
		return 0, e
	})
	return info, err
}

// CreateIfAbsent implements remote.Store.
func (l *Latency) CreateIfAbsent(ctx context.Context, key string, data []byte) (etag string, err error) {
	sent := time.Now()
	err = l.do(ctx, KindCreate, key, len(data), func() (int, error) {
		var e error
		etag, e = l.inner.CreateIfAbsent(ctx, key, data)
		if e == nil && l.onWrite != nil {
			l.onWrite(key, data, sent)
		}
		return 0, e
	})
	return etag, err
}

// ReplaceIfMatch implements remote.Store.
func (l *Latency) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (newETag string, err error) {
	sent := time.Now()
	err = l.do(ctx, KindReplace, key, len(data), func() (int, error) {
		var e error
		newETag, e = l.inner.ReplaceIfMatch(ctx, key, data, etag)
		if e == nil && l.onWrite != nil {
			l.onWrite(key, data, sent)
		}
		return 0, e
	})
	return newETag, err
}

// Put implements remote.Store.
func (l *Latency) Put(ctx context.Context, key string, data []byte) error {
	return l.do(ctx, KindPut, key, len(data), func() (int, error) {
		return 0, l.inner.Put(ctx, key, data)
	})
}

// Delete implements remote.Store.
func (l *Latency) Delete(ctx context.Context, key string) error {
	return l.do(ctx, KindDelete, key, 0, func() (int, error) {
		return 0, l.inner.Delete(ctx, key)
	})
}

// List implements remote.Store.
func (l *Latency) List(ctx context.Context, prefix string) (infos []remote.ObjectInfo, err error) {
	err = l.do(ctx, KindList, prefix, 0, func() (int, error) {
		var e error
		infos, e = l.inner.List(ctx, prefix)
		return 64 * len(infos), e // about a listing entry's XML per object
	})
	return infos, err
}

// ListAfter implements remote.ListerAfter when the store it wraps does:
// one request for the keys after after, as S3's StartAfter. Without it
// publish's LIST of the window fell back to List, which moved (and, in
// memstore, sorted) every proposal of the run: a cost of the simulation
// that grew with its length, charged to the protocol.
func (l *Latency) ListAfter(ctx context.Context, prefix, after string) (infos []remote.ObjectInfo, err error) {
	la, ok := l.inner.(remote.ListerAfter)
	if !ok {
		infos, err = l.List(ctx, prefix)
		return remote.After(infos, after), err
	}
	err = l.do(ctx, KindList, prefix, 0, func() (int, error) {
		var e error
		infos, e = la.ListAfter(ctx, prefix, after)
		return 64 * len(infos), e
	})
	return infos, err
}
