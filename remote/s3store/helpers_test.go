package s3store_test

import (
	"context"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// wallClock is publish.Clock on the real clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// publishOne publishes one change by format version 4, as a writer alone
// on the store (its proposal is folded as built, so the fold needs no
// objects of its own): a commit on top of the store's head whose pack
// holds a placeholder tree (remotetest.Proposal).
func publishOne(ctx context.Context, store remote.Store) (publish.Result, error) {
	id, err := remote.EnsureStoreID(ctx, store)
	if err != nil {
		return publish.Result{}, err
	}
	pub, err := publish.New(store, publish.Options{Store: id, Clock: wallClock{}, CondEstimate: 50 * time.Millisecond, RTT: 5 * time.Millisecond,
		Objects: func(context.Context, publish.State) (cas.Source, error) { return cas.NewMemory(), nil }})
	if err != nil {
		return publish.Result{}, err
	}
	pid := remote.NewUUIDv7()
	return pub.Commit(ctx, pid, func(_ context.Context, st publish.State) (publish.Change, error) {
		b := remotetest.Proposal(st.Head(), pid, []byte("test"))
		return publish.Change{Head: b.Head, Pack: b.Pack}, nil
	})
}
