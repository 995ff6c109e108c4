package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
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

// limitedStore answers every conditional write of `current` with a rate
// limit (HTTP 429) while limited is set.
type limitedStore struct {
	*memstore.Mem
	limited atomic.Bool
	refused atomic.Int32
}

func (l *limitedStore) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	if key == remote.CurrentKey && l.limited.Load() {
		l.refused.Add(1)
		return "", remote.ErrRateLimited
	}
	return l.Mem.CreateIfAbsent(ctx, key, data)
}

func (l *limitedStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if key == remote.CurrentKey && l.limited.Load() {
		l.refused.Add(1)
		return "", remote.ErrRateLimited
	}
	return l.Mem.ReplaceIfMatch(ctx, key, data, etag)
}

// A store that rate-limits every write of `current` never fails the
// commit by a count of refusals: each is a lost race that backs off and
// folds again, until the caller stops waiting (here after a few
// back-offs). The caller then learns that the outcome is unknown (its
// change is registered, another writer could still accept it), retryable,
// never STORE_UNREACHABLE; L is untouched, nothing was accepted, and the
// retry once the store accepts writes publishes the change exactly once.
func TestRateLimitedEveryWriteWaitsForTheCaller(t *testing.T) {
	store := &limitedStore{Mem: memstore.New()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits atomic.Int32
	a := newAgent(t, store, func(c *Config) {
		c.Sleep = func(ctx context.Context, _ time.Duration) error {
			if waits.Add(1) == 8 {
				cancel() // the caller's deadline
			}
			return ctx.Err()
		}
	})
	a.pull()
	a.write("f.md", "1\n")
	store.limited.Store(true)
	_, err := a.e.Commit(ctx, "", "limited")
	if de := domainErr(t, err, diag.CodeStorageFailure, diag.ReasonAcceptanceUnknown); !de.Retryable {
		t.Fatal("ACCEPTANCE_UNKNOWN must be retryable")
	}
	if store.refused.Load() < 2 {
		t.Fatalf("%d writes refused: a rate-limited write must be tried again", store.refused.Load())
	}
	if a.read("f.md") != "1\n" {
		t.Fatal("local edit touched")
	}
	if _, _, err := store.Get(context.Background(), remote.CurrentKey); !errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("current after refused writes: %v", err)
	}
	store.limited.Store(false)
	if res := a.commit("now"); res.Generation != 1 {
		t.Fatalf("the retry: %+v", res)
	}
	b := newAgent(t, store)
	if b.pull().Generation != 1 || b.read("f.md") != "1\n" {
		t.Fatal("the change is not published exactly once")
	}
}
