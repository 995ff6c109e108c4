package s3store_test

// The publication protocol on the S3 backend against SeaweedFS: the
// conditional write the whole design rests on, with real racing clients and
// real lost replies.

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
)

// barrierStore holds each writer's first write of `current` at a shared
// barrier: every writer has read the same ETag before any of them writes.
type barrierStore struct {
	remote.Store
	barrier *memstore.Barrier
	once    sync.Once
}

func (b *barrierStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if key == remote.CurrentKey {
		b.once.Do(func() { _ = b.barrier.Wait(ctx) })
	}
	return b.Store.ReplaceIfMatch(ctx, key, data, etag)
}

// N writers, each with its own client (as separate processes would be),
// read the same `current` and replace it together: exactly one wins the
// first round, every other hears the lost race, rebuilds and is accepted.
func TestS3PublishRaceEveryWriterAccepted(t *testing.T) {
	const writers = 5
	srv := seaweed.Shared(t)
	cfg := seaweedConfig(srv)
	ctx := context.Background()
	var base proposer
	if _, err := remote.Open(openS3(t, cfg), remote.Options{}).Publish(ctx, base.build); err != nil {
		t.Fatal(err)
	}

	barrier := memstore.NewBarrier(writers)
	accepted := make([]remote.Accepted, writers)
	errs := make([]error, writers)
	props := make([]proposer, writers)
	var wg sync.WaitGroup
	for i := range writers {
		store := &barrierStore{Store: openS3(t, cfg), barrier: barrier}
		wg.Go(func() {
			accepted[i], errs[i] = remote.Open(store, remote.Options{}).Publish(ctx, props[i].build)
		})
	}
	wg.Wait()

	firstTry := 0
	for i := range writers {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v (a lost race must be retried, never a storage error)", i, errs[i])
		}
		if accepted[i].Attempts == 1 {
			firstTry++
		}
		if props[i].observed[0].Generation() != 1 {
			t.Fatalf("writer %d first built on generation %d, want 1", i, props[i].observed[0].Generation())
		}
	}
	if firstTry != 1 {
		t.Fatalf("%d writers won the first round on one ETag, want exactly 1", firstTry)
	}
	cur, err := remote.Open(openS3(t, cfg), remote.Options{}).ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Generation() != 1+writers {
		t.Fatalf("generation %d after %d publications on generation 1", cur.Generation(), writers)
	}
	for i, acc := range accepted {
		if _, ok := cur.Manifest.FindPublication(acc.Publication); !ok {
			t.Fatalf("writer %d's accepted publication is not in current", i)
		}
	}
}

// The server applies the write of `current` but its reply is lost: Publish
// re-reads, finds its publication ID and reports acceptance, once for the
// first publication (create) and once for the next (replace).
func TestS3PublishReplyLostAfterAcceptance(t *testing.T) {
	srv := seaweed.Shared(t)
	ft := newFaultTransport(dropReply, 2, isConditionalPut(remote.CurrentKey))
	nb := remote.Open(seaweedStore(t, srv, ft), remote.Options{})
	ctx := context.Background()
	for round := 1; round <= 2; round++ {
		var p proposer
		acc, err := nb.Publish(ctx, p.build)
		if err != nil {
			t.Fatalf("round %d: Publish = %v, want acceptance proved by publication ID", round, err)
		}
		if !acc.Published || acc.Attempts != 1 || acc.State.Generation() != uint64(round) {
			t.Fatalf("round %d: accepted %+v", round, acc)
		}
		cur, err := nb.ReadCurrent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cur.Manifest.FindPublication(acc.Publication); !ok || cur.ETag != acc.State.ETag {
			t.Fatalf("round %d: current does not hold the publication Publish reported", round)
		}
	}
	if ft.Fired() != 2 {
		t.Fatalf("fault fired %d times, want 2", ft.Fired())
	}
}

// The write of `current` never leaves the client: nothing is accepted, no
// acceptance is reported, and the uploaded pack changes nothing.
func TestS3PublishFailureBeforeSendNotAccepted(t *testing.T) {
	srv := seaweed.Shared(t)
	// The first publication creates current; the fault waits for the replace.
	ft := newFaultTransport(failBeforeSend, 1, func(req *http.Request) bool {
		return isConditionalPut(remote.CurrentKey)(req) && req.Header.Get("If-Match") != ""
	})
	store := seaweedStore(t, srv, ft)
	nb := remote.Open(store, remote.Options{})
	ctx := context.Background()
	var first proposer
	if _, err := nb.Publish(ctx, first.build); err != nil {
		t.Fatal(err)
	}
	before, err := nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var p proposer
	acc, err := nb.Publish(ctx, p.build)
	if err == nil || !errors.Is(err, remote.ErrUnavailable) || errors.Is(err, remote.ErrAmbiguous) {
		t.Fatalf("Publish = %+v, %v; want ErrUnavailable (nothing was sent)", acc, err)
	}
	after, err := nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.ETag != before.ETag || after.Generation() != before.Generation() {
		t.Fatalf("current moved from generation %d to %d", before.Generation(), after.Generation())
	}
	if _, ok := after.Manifest.FindPublication(p.pubs[0]); ok {
		t.Fatal("a publication whose write never left the client is in current")
	}
	packs, err := store.List(ctx, remote.IncrementsPrefix)
	if err != nil || len(packs) != 2 {
		t.Fatalf("increments = %v, %v; want the accepted pack and the orphan", packs, err)
	}
	if ft.Fired() != 1 {
		t.Fatalf("fault fired %d times, want 1", ft.Fired())
	}
}
