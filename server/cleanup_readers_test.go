package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// afterReadStore runs hook once, right after the first read of `current`
// through it returned: what another process does between a reader's read
// of `current` and its pack downloads.
type afterReadStore struct {
	remote.Store
	once sync.Once
	hook func()
}

func (s *afterReadStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	data, etag, err := s.Store.Get(ctx, key)
	if key == remote.CurrentKey && s.hook != nil {
		s.once.Do(s.hook)
	}
	return data, etag, err
}

// Issue 14, item 5: a reader whose manifest names packs that a cleanup
// then removes (a checkpoint swapped in meanwhile, --retained-checkpoints
// 0) re-reads `current` and succeeds, instead of failing STORAGE_INTEGRITY
// / MISSING_PACK: for a pull, and for a commit (Publish retries the
// attempt on the newer state).
func TestReadersSurviveCleanup(t *testing.T) {
	t.Skip(v4SmallScope)
	for _, op := range []string{"pull", "commit"} {
		t.Run(op, func(t *testing.T) {
			mem := memstore.New()
			// A window by time shorter than the test: history goes with
			// its checkpoints (the default, 30 days, keeps it all).
			w := newAgent(t, mem, withCheckpoints(7, 0), func(c *Config) { c.Retain = time.Nanosecond })
			hooked := &afterReadStore{Store: mem}
			r := newAgent(t, hooked)
			w.pull()
			for i := range 3 {
				w.write(fmt.Sprintf("f%d.md", i), "")
			}
			w.commit("seed")
			r.pull()
			for i := range 5 {
				w.appendTo(fmt.Sprintf("f%d.md", i%3), fmt.Sprint("line ", i, "\n"))
				w.commit(fmt.Sprint("c", i))
			}
			w.e.background.Wait()
			stale, err := remote.Open(mem, remote.Options{}).ReadCurrent(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// Right after the reader read generation 6: one more commit
			// reaches the threshold, its checkpoint swaps in and cleanup
			// removes the old chain.
			hooked.hook = func() {
				w.appendTo("f0.md", "last\n")
				w.commit("last")
				w.e.background.Wait()
			}
			if op == "pull" {
				r.pull()
			} else {
				r.write("r.md", "from the reader\n")
				r.commit("reader")
			}
			// The race was real: the manifest the reader read names packs
			// that are gone.
			probe := newAgent(t, mem)
			if _, err := probe.e.sync(context.Background(), stale); !errors.Is(err, remote.ErrMissingPack) && !isMissing(err) {
				t.Fatalf("the stale manifest still reads (%v): the race was not exercised", err)
			}
			w.pull()
			equalMaps(t, "reader", r.files(), w.files())
		})
	}
}

func isMissing(err error) bool {
	var de *Error
	return errors.As(err, &de) && de.Reason == ReasonMissingPack
}
