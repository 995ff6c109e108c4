package s3store_test

import (
	"context"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
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
// on the store: a commit on the store's head adding a file of its own,
// whose pack holds the commit's whole closure. objects keeps every object
// published so far (the fold's view of the history), one per store.
func publishOne(ctx context.Context, store remote.Store) (publish.Result, error) {
	id, err := remote.EnsureStoreID(ctx, store)
	if err != nil {
		return publish.Result{}, err
	}
	objectsMu.Lock()
	mem, ok := objects[store]
	if !ok {
		mem = cas.NewObjectSet()
		objects[store] = mem
	}
	objectsMu.Unlock()
	pub, err := publish.New(store, publish.Options{Store: id, Clock: wallClock{}, CondEstimate: 50 * time.Millisecond, RTT: 5 * time.Millisecond,
		Objects: func(context.Context, publish.State) (cas.Source, error) { return mem, nil }})
	if err != nil {
		return publish.Result{}, err
	}
	pid := remote.NewUUIDv7()
	return pub.Commit(ctx, pid, func(_ context.Context, st publish.State) (publish.Change, error) {
		own := cas.NewObjectSet()
		file, err := cas.WriteFile(own, []byte(pid+"\n"))
		if err != nil {
			return publish.Change{}, err
		}
		tree, err := cas.WriteTree(own, map[string]cas.ID{pid + ".md": file})
		if err != nil {
			return publish.Change{}, err
		}
		commit := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: st.Head(), Publication: pid, Time: time.Now(), Message: []byte("test")})
		if err := own.Put(commit); err != nil {
			return publish.Change{}, err
		}
		w := cas.NewPackWriter()
		for _, oid := range own.IDs() {
			o, _ := own.Get(oid)
			if err := w.Put(o); err != nil {
				return publish.Change{}, err
			}
			if err := mem.Put(o); err != nil {
				return publish.Change{}, err
			}
		}
		pack, err := w.Finish()
		return publish.Change{Head: commit.ID, Pack: pack}, err
	})
}

var (
	objectsMu sync.Mutex
	objects   = map[remote.Store]*cas.ObjectSet{}
)
