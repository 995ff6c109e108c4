package s3store_test

// The store's server stalls or crashes under a notebook (a server of the
// test's own: it is paused and killed).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
)

func TestS3Outage(t *testing.T) {
	srv := seaweed.Start(t)
	ctx := context.Background()

	// A server that stops answering after the request was sent: a write is
	// ambiguous, a read merely unavailable.
	t.Run("Stalled", func(t *testing.T) {
		s := seaweedStore(t, srv, nil)
		etag, err := s.CreateIfAbsent(ctx, "current", []byte("v1"))
		if err != nil {
			t.Fatal(err)
		}
		srv.Pause(t)
		short, cancel := context.WithTimeout(ctx, time.Second)
		_, err = s.ReplaceIfMatch(short, "current", []byte("v2"), etag)
		cancel()
		expectOnly(t, "replace on a stalled server", err, remote.ErrAmbiguous)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("cause lost: %v", err)
		}
		short, cancel = context.WithTimeout(ctx, time.Second)
		_, _, err = s.Get(short, "current")
		cancel()
		expectOnly(t, "get on a stalled server", err, remote.ErrUnavailable)
		srv.Resume(t)
		if _, _, err := s.Get(ctx, "current"); err != nil {
			t.Fatalf("after resume: %v", err)
		}
	})

	// A crashed server refuses connections: publishing fails as
	// unavailable (never ambiguous, never accepted), and after the restart
	// the notebook continues from the state it had.
	t.Run("Crashed", func(t *testing.T) {
		store := seaweedStore(t, srv, nil)
		nb := remote.Open(store, remote.Options{})
		if _, err := publishOne(ctx, store); err != nil {
			t.Fatal(err)
		}
		first, err := nb.ReadCurrent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		srv.Kill(t)
		short, cancel := context.WithTimeout(ctx, 20*time.Second)
		acc, err := publishOne(short, store)
		cancel()
		if !errors.Is(err, remote.ErrUnavailable) || errors.Is(err, remote.ErrAmbiguous) {
			t.Fatalf("publishing on a dead server = %+v, %v; want ErrUnavailable", acc, err)
		}
		srv.Restart(t)
		cur, err := nb.ReadCurrent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cur.ETag != first.ETag || cur.Generation() != 1 {
			t.Fatalf("after the crash current is generation %d, want the accepted 1", cur.Generation())
		}
		next, err := publishOne(ctx, store)
		if err != nil || next.Generation != 2 {
			t.Fatalf("publishing after the restart: %+v, %v", next, err)
		}
	})
}
