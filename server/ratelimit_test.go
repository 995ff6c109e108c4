package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A store that rate-limits writes of one name (R2 and GCS answer 429 above
// about one write per second) refuses the first conditional writes of
// `current`: each is a lost race that backs off and re-reads, and the
// commit is accepted once a write gets through, never STORE_UNREACHABLE.
func TestRateLimitedCurrentStillAcceptsTheCommit(t *testing.T) {
	store := memstore.New()
	var mu sync.Mutex
	var waits []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	a := newAgent(t, store, func(c *Config) { c.Sleep = sleep })
	a.pull()
	a.write("f.md", "1\n")
	// The first commit creates `current`, the second replaces it.
	const limited = 3
	for range limited {
		store.Inject(memstore.Fault{Op: memstore.OpCreate, KeyPrefix: remote.CurrentKey, Before: remote.ErrRateLimited})
	}
	if res := a.commit("seed"); res.Generation != 1 {
		t.Fatalf("seed accepted at generation %d, want 1", res.Generation)
	}
	memstore.AssertFaultsFired(t, store)
	mu.Lock()
	if len(waits) < limited {
		t.Fatalf("%d waits for %d rate-limited writes: each must back off", len(waits), limited)
	}
	waits = nil
	mu.Unlock()

	a.write("f.md", "1\n2\n")
	for range limited {
		store.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrRateLimited})
	}
	if res := a.commit("after the limit"); res.Generation != 2 || len(res.Files) != 1 {
		t.Fatalf("result %+v, want generation 2 with f.md", res)
	}
	memstore.AssertFaultsFired(t, store)
	mu.Lock()
	if len(waits) < limited {
		t.Fatalf("%d waits for %d rate-limited writes: each must back off", len(waits), limited)
	}
	mu.Unlock()
	if b := newAgent(t, store); b.pull().Generation != 2 || b.read("f.md") != "1\n2\n" {
		t.Fatal("the accepted commit is not what a reader pulls")
	}
}

// A store that rate-limits every attempt's write of `current` leaves the
// commit REMOTE_BUSY (retryable, nothing lost), never STORE_UNREACHABLE;
// L is untouched and the next commit goes through.
func TestRateLimitedEveryAttemptIsRemoteBusy(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) {
		c.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	})
	a.pull()
	a.write("f.md", "1\n")
	store.Inject(
		memstore.Fault{Op: memstore.OpCreate, KeyPrefix: remote.CurrentKey, Before: remote.ErrRateLimited},
		memstore.Fault{Op: memstore.OpCreate, KeyPrefix: remote.CurrentKey, Before: remote.ErrRateLimited},
	)
	_, err := a.e.Commit(context.Background(), "", "limited")
	if de := domainErr(t, err, CodeRemoteBusy, ReasonRetriesExhausted); !de.Retryable {
		t.Fatal("REMOTE_BUSY must be retryable")
	}
	memstore.AssertFaultsFired(t, store)
	if a.read("f.md") != "1\n" {
		t.Fatal("local edit touched")
	}
	a.commit("now")
}
