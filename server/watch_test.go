package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// requestCounter counts every request made through it and can fail the
// next HEADs with ErrUnavailable.
type requestCounter struct {
	remote.Store
	n         atomic.Int64
	failHeads atomic.Int64
}

func (c *requestCounter) Get(ctx context.Context, key string) ([]byte, string, error) {
	c.n.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *requestCounter) Head(ctx context.Context, key string) (remote.ObjectInfo, error) {
	c.n.Add(1)
	if c.failHeads.Load() > 0 {
		c.failHeads.Add(-1)
		return remote.ObjectInfo{}, fmt.Errorf("scripted: %w", remote.ErrUnavailable)
	}
	return c.Store.Head(ctx, key)
}

func (c *requestCounter) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	c.n.Add(1)
	return c.Store.CreateIfAbsent(ctx, key, data)
}

func (c *requestCounter) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	c.n.Add(1)
	return c.Store.ReplaceIfMatch(ctx, key, data, etag)
}

func (c *requestCounter) Put(ctx context.Context, key string, data []byte) error {
	c.n.Add(1)
	return c.Store.Put(ctx, key, data)
}

func (c *requestCounter) Delete(ctx context.Context, key string) error {
	c.n.Add(1)
	return c.Store.Delete(ctx, key)
}

func (c *requestCounter) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	c.n.Add(1)
	return c.Store.List(ctx, prefix)
}

// TestWatchPollsOnceAndBacksOff runs a watch on an injected clock (no real
// waiting): the recent publications first; then every publication another
// writer makes between two polls, exactly once, oldest first; an idle poll
// is one request; the interval doubles from 100 ms while nothing changes
// and stays at 1 s (so after 1.5 s idle, and a minute, it polls once a
// second); a change brings it back to 100 ms; an unreachable store is
// polled again at 1 s.
func TestWatchPollsOnceAndBacksOff(t *testing.T) {
	mem := memstore.New()
	w := newAgent(t, mem)
	w.pull()
	text := ""
	commit := func(msg string) uint64 {
		text += msg + "\n"
		w.write("log.md", text)
		g := w.commit(msg).Generation
		w.e.publishing.Background.Wait() // nothing of the writer's runs during a poll
		return g
	}
	commit("one")
	commit("two")
	counter := &requestCounter{Store: mem}
	r := newAgent(t, counter)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var recent []uint64
	var got, want []uint64
	var waits []time.Duration
	var changedAt []int // the polls after which a commit was made
	last := int64(-1)
	sleep := func(ctx context.Context, d time.Duration) error {
		poll := len(waits)
		if last >= 0 && !slices.Contains(changedAt, poll-1) {
			if n := counter.n.Load() - last; n != 1 {
				t.Errorf("poll %d made %d requests, want 1", poll-1, n)
			}
		}
		waits = append(waits, d)
		switch poll {
		case 3, 70:
			want = append(want, commit(fmt.Sprint("at poll ", poll)))
			changedAt = append(changedAt, poll)
		case 40:
			// Two publications between two polls.
			want = append(want, commit("a"), commit("b"))
			changedAt = append(changedAt, poll)
		case 30:
			counter.failHeads.Store(1)
		case 80:
			cancel()
			return ctx.Err()
		}
		last = counter.n.Load()
		return nil
	}
	err := r.e.Watch(ctx, WatchOptions{
		Query: history.Query{Limit: 10},
		Recent: func(en []history.Entry) error {
			for _, e := range en {
				recent = append(recent, e.Generation)
			}
			return nil
		},
		New: func(en history.Entry) error {
			got = append(got, en.Generation)
			return nil
		},
		Sleep: sleep,
	})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if !slices.Equal(recent, []uint64{2, 1}) || !slices.Equal(got, want) {
		t.Errorf("recent %v, new %v; want [2 1], %v", recent, got, want)
	}
	// The intervals: from 100 ms, doubling to 1 s while idle; 100 ms again
	// after each poll that saw a change (the one after a commit); 1 s after
	// the failed poll.
	ms := time.Millisecond
	backoff := []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second}
	expect := func(i int) time.Duration {
		since := i // waits since the interval was last reset
		for _, c := range changedAt {
			if i >= c+1 {
				since = i - (c + 1)
			}
		}
		if i == 31 {
			return time.Second // after the failed poll
		}
		return backoff[min(since, len(backoff)-1)]
	}
	for i, d := range waits {
		if d != expect(i) {
			t.Fatalf("wait %d: %v, want %v (all: %v)", i, d, expect(i), waits)
		}
	}
}

// A callback's error ends the watch with it (a closed output); the end of
// ctx ends it with nil.
func TestWatchEnds(t *testing.T) {
	mem := memstore.New()
	w := newAgent(t, mem)
	w.pull()
	w.write("a.md", "a\n")
	w.commit("a")
	r := newAgent(t, mem)
	closed := errors.New("closed")
	polls := 0
	err := r.e.Watch(context.Background(), WatchOptions{
		Recent: func([]history.Entry) error { return nil },
		New:    func(history.Entry) error { return closed },
		Sleep: func(ctx context.Context, d time.Duration) error {
			if polls++; polls == 2 {
				w.write("a.md", "b\n")
				w.commit("b")
			}
			return nil
		},
	})
	if !errors.Is(err, closed) || polls != 2 {
		t.Errorf("Watch = %v after %d polls, want the callback's error after 2", err, polls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.e.Watch(ctx, WatchOptions{Recent: func([]history.Entry) error { return nil }}); err != nil {
		t.Errorf("Watch on an ended context = %v, want nil", err)
	}
	domainErr(t, r.e.Watch(context.Background(), WatchOptions{Query: history.Query{Until: time.Now()}}), diag.CodeInvalidRequest, diag.ReasonInvalidArgument)
}
