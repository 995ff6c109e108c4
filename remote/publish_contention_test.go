package remote_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A retry built while `current` moved again is dropped before its upload:
// only the first attempt (which cannot know) uploads a pack and races the
// conditional write; the doomed retries cost one HEAD each.
func TestPublishRetrySkipsDoomedUpload(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	clock := &noSleep{}
	nb := remote.Open(m, remote.Options{Retries: 2, Sleep: clock.Sleep})
	calls := 0
	_, err := nb.Publish(ctx, rivalBuild(t, m, &calls))
	if !errors.Is(err, remote.ErrLostRace) || !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("Publish = %v, want ErrLostRace (caused by the precondition)", err)
	}
	packs, err := m.List(ctx, "packs/increments/")
	if err != nil {
		t.Fatal(err)
	}
	// The rival published once per build (3), we uploaded once.
	if calls != 3 || len(packs) != 4 {
		t.Fatalf("%d builds, %d increment packs in the store; want 3 builds and 4 packs (3 accepted rivals + our first attempt)", calls, len(packs))
	}
}

// When an attempt takes longer than the first backoff ceiling (many writers
// on few cores), the retry waits on the scale of that attempt, not of the
// 25 ms default, so the losers do not all come back inside the next
// winner's window.
func TestPublishBackoffSpansTheLostWindow(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	now := time.Unix(1_700_000_000, 0)
	clock := &noSleep{}
	const draw = 399 * time.Millisecond
	nb := remote.Open(m, remote.Options{
		Retries: 1,
		Sleep:   clock.Sleep,
		Now:     func() time.Time { return now },
		Rand:    fixedRand(draw),
	})
	calls := 0
	rival := rivalBuild(t, m, &calls)
	slow := func(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
		now = now.Add(400 * time.Millisecond) // the build takes 400 ms
		return rival(ctx, observed, pub)
	}
	if _, err := nb.Publish(ctx, slow); !errors.Is(err, remote.ErrLostRace) {
		t.Fatalf("Publish = %v, want ErrLostRace", err)
	}
	// With a 25 ms ceiling the same draw would have waited 399 ms mod 25 ms.
	if len(clock.waits) != 1 || clock.waits[0] != draw {
		t.Fatalf("waits %v, want one wait of %v (a ceiling of at least the 400 ms window)", clock.waits, draw)
	}
}
