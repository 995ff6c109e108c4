package remote_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// N writers read the same `current`, reach the conditional replace together
// (a barrier in the store), exactly one wins; each loser gets the lost-race
// signal, re-reads, rebuilds on the new state and is accepted later.
func TestPublishRaceEveryWriterAccepted(t *testing.T) {
	const writers = 6
	ctx := context.Background()
	m := memstore.New()
	var base proposer
	if _, err := remote.Open(m, remote.Options{}).Publish(ctx, base.build); err != nil {
		t.Fatal(err)
	}
	barrier := memstore.NewBarrier(writers)
	for range writers {
		m.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Barrier: barrier})
	}
	defer memstore.AssertFaultsFired(t, m)

	var wg sync.WaitGroup
	accepted := make([]remote.Accepted, writers)
	errs := make([]error, writers)
	props := make([]proposer, writers)
	for i := range writers {
		wg.Go(func() {
			nb := remote.Open(m, remote.Options{Sleep: (&noSleep{}).Sleep})
			accepted[i], errs[i] = nb.Publish(ctx, props[i].build)
		})
	}
	wg.Wait()

	firstTry := 0
	seen := map[string]bool{}
	for i := range writers {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v (a lost race must be retried, never a storage error)", i, errs[i])
		}
		if accepted[i].Attempts == 1 {
			firstTry++
		} else if len(props[i].observed) != accepted[i].Attempts || props[i].observed[1].Generation() <= 1 {
			t.Fatalf("writer %d: rebuilt %d times for %d attempts, second build saw generation %d",
				i, len(props[i].observed), accepted[i].Attempts, props[i].observed[1].Generation())
		}
		for _, pub := range props[i].pubs {
			if seen[pub] {
				t.Fatalf("writer %d reused publication ID %s: every attempt needs a fresh one", i, pub)
			}
			seen[pub] = true
		}
	}
	if firstTry != 1 {
		t.Fatalf("%d writers won at the barrier, want exactly 1", firstTry)
	}
	cur, err := remote.Open(m, remote.Options{}).ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Generation() != 1+writers {
		t.Fatalf("generation %d after %d accepted publications on generation 1", cur.Generation(), writers)
	}
	for i, acc := range accepted {
		if _, ok := cur.Manifest.FindPublication(acc.Publication); !ok {
			t.Fatalf("writer %d's accepted publication is not in current", i)
		}
	}
}

// rivalBuild returns a build callback that lets a rival publish first on
// every attempt, so every conditional replace of ours loses.
func rivalBuild(t *testing.T, m *memstore.Mem, calls *int) func(context.Context, remote.State, string) (remote.Proposal, error) {
	rival := remote.Open(m, remote.Options{})
	var mine proposer
	return func(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
		*calls++
		var p proposer
		if _, err := rival.Publish(ctx, p.build); err != nil {
			t.Fatalf("rival: %v", err)
		}
		return mine.build(ctx, observed, pub)
	}
}

func TestPublishRetriesExhausted(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	clock := &noSleep{}
	nb := remote.Open(m, remote.Options{Retries: 2, FirstWait: 10 * time.Millisecond, Sleep: clock.Sleep})
	calls := 0
	_, err := nb.Publish(ctx, rivalBuild(t, m, &calls))
	if !errors.Is(err, remote.ErrLostRace) || !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("Publish = %v, want ErrLostRace (caused by the precondition)", err)
	}
	if calls != 3 || len(clock.waits) != 2 {
		t.Fatalf("%d builds and %d waits, want 3 attempts (1 + 2 retries) and 2 backoffs", calls, len(clock.waits))
	}
	// Only the rival's publications are accepted.
	cur, _ := nb.ReadCurrent(ctx)
	if cur.Generation() != 3 {
		t.Fatalf("generation %d, want the rival's 3", cur.Generation())
	}

	calls = 0
	none := remote.Open(m, remote.Options{Retries: remote.NoRetries, Sleep: clock.Sleep})
	if _, err := none.Publish(ctx, rivalBuild(t, m, &calls)); !errors.Is(err, remote.ErrLostRace) || calls != 1 {
		t.Fatalf("NoRetries: %v after %d attempts, want ErrLostRace after 1", err, calls)
	}
}

// fixedRand is a rand.Source returning one value.
type fixedRand uint64

func (f fixedRand) Uint64() uint64 { return uint64(f) }

func TestPublishBackoffDoublesToCap(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	clock := &noSleep{}
	// A stopped clock: each lost attempt's window is then 0, and the
	// ceiling is FirstWait's doubling alone. On the real clock an attempt
	// slower than FirstWait (a loaded machine) stretched the ceiling to its
	// window.
	stopped := func() time.Time { return time.Unix(1800000000, 0) }
	const r = 1<<64 - 1
	nb := remote.Open(m, remote.Options{Retries: 5, FirstWait: 10 * time.Millisecond, MaxWait: 40 * time.Millisecond,
		Sleep: clock.Sleep, Rand: fixedRand(r), Now: stopped})
	calls := 0
	if _, err := nb.Publish(ctx, rivalBuild(t, m, &calls)); !errors.Is(err, remote.ErrLostRace) {
		t.Fatal(err)
	}
	var want []time.Duration
	for _, ceiling := range []time.Duration{10, 20, 40, 40, 40} {
		ceiling *= time.Millisecond
		want = append(want, time.Duration(uint64(r)%uint64(ceiling)))
	}
	if !slices.Equal(clock.waits, want) {
		t.Fatalf("waits %v, want full jitter under ceilings 10, 20, 40, 40, 40 ms: %v", clock.waits, want)
	}
	// The default source spreads writers: waits stay below their ceiling.
	clock.waits = nil
	nb = remote.Open(m, remote.Options{Retries: 3, Sleep: clock.Sleep, Now: stopped})
	if _, err := nb.Publish(ctx, rivalBuild(t, m, &calls)); !errors.Is(err, remote.ErrLostRace) {
		t.Fatal(err)
	}
	for i, w := range clock.waits {
		if ceiling := remote.DefaultFirstWait << i; w < 0 || w >= ceiling {
			t.Fatalf("wait %d = %v, outside [0, %v)", i, w, ceiling)
		}
	}
}

func TestPublishCancelledDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := memstore.New()
	// The default wait (a timer or the context), told when the first
	// backoff begins: cancelling earlier would end the rival's write in the
	// first attempt instead of the backoff this test is about.
	backoff := make(chan struct{})
	var once sync.Once
	wait := func(ctx context.Context, d time.Duration) error {
		once.Do(func() { close(backoff) })
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	nb := remote.Open(m, remote.Options{FirstWait: time.Hour, MaxWait: time.Hour, Sleep: wait})
	calls := 0
	build := rivalBuild(t, m, &calls)
	done := make(chan error)
	go func() {
		_, err := nb.Publish(ctx, build)
		done <- err
	}()
	select {
	case <-backoff:
	case err := <-done:
		t.Fatalf("Publish = %v before any backoff, want a lost race and a wait", err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Publish = %v, want context.Canceled", err)
		}
		if calls != 1 {
			t.Fatalf("%d attempts, want the first one, then the cancelled wait", calls)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Publish did not stop its backoff on cancel")
	}
}
