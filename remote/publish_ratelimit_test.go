package remote_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A conditional write of `current` the store refuses as rate limited (R2
// and GCS: about one write per second to one name) was not applied: it is
// a lost race, retried after a backoff whose window is at least
// RateLimitWindow (a sooner retry would be refused again), with no read
// spent to resolve it, and the publication is accepted once a write gets
// through.
func TestPublishRateLimitedIsALostRaceThatBacksOff(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	var seed proposer
	if _, err := remote.Open(m, remote.Options{}).Publish(ctx, seed.build); err != nil {
		t.Fatal(err)
	}
	clock := &noSleep{}
	const r = 1<<64 - 1
	nb := remote.Open(m, remote.Options{FirstWait: 10 * time.Millisecond, MaxWait: 4 * time.Second,
		Sleep: clock.Sleep, Rand: fixedRand(r)})
	m.Inject(
		memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrRateLimited},
		memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrRateLimited},
	)
	gets := m.Calls(memstore.OpGet)
	var p proposer
	acc, err := nb.Publish(ctx, p.build)
	if err != nil {
		t.Fatalf("Publish = %v, want accepted after the rate-limited writes", err)
	}
	memstore.AssertFaultsFired(t, m)
	if acc.Attempts != 3 || acc.State.Generation() != 2 {
		t.Fatalf("accepted at generation %d after %d attempts, want 2 after 3", acc.State.Generation(), acc.Attempts)
	}
	want := []time.Duration{time.Duration(uint64(r) % uint64(time.Second)), time.Duration(uint64(r) % uint64(2*time.Second))}
	if !slices.Equal(clock.waits, want) {
		t.Fatalf("waits %v, want full jitter under 1 s then 2 s (the rate limit's window, doubling): %v", clock.waits, want)
	}
	if got := m.Calls(memstore.OpGet) - gets; got != 3 {
		t.Fatalf("%d GETs, want 3 (the first read and one re-read per lost race: a refused write needs no resolving)", got)
	}
}
