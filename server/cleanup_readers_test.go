package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
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

// Issue 14, item 5: a reader whose `current` names packs that a sweep
// then removes (checkpoints made active meanwhile, the history below the
// oldest listed one deleted) reads `current` again and succeeds, instead
// of failing STORAGE_INTEGRITY / MISSING_PACK: for a pull, and for a
// commit (its call is made once more on the newer state). A version-4
// sweep deletes only what a `current` a window (K + M) older needs: so a
// small window (K = M = 4), a checkpoint every 8 generations, and the
// writer commits 28 generations and sweeps between the reader's read of
// `current` (generation 12) and its downloads.
func TestReadersSurviveCleanup(t *testing.T) {
	for _, op := range []string{"pull", "commit"} {
		t.Run(op, func(t *testing.T) {
			mem := memstore.New()
			// No window by time: history goes with its checkpoints (the
			// default, 30 days, keeps it all).
			w := retainV4Agent(t, mem, func(c *Config) { c.Retain = NoRetainWindow })
			hooked := &afterReadStore{Store: mem}
			r := retainV4Agent(t, hooked)
			w.pull()
			for i := range 3 {
				w.write(fmt.Sprintf("f%d.md", i), "")
			}
			w.commit("seed")
			r.pull()
			for i := range 11 {
				w.appendTo(fmt.Sprintf("f%d.md", i%3), fmt.Sprint("line ", i, "\n"))
				w.commit(fmt.Sprint("c", i))
				w.e.publishing.Background.Wait()
			}
			stale, err := remote.Open(mem, remote.Options{}).ReadCurrent(context.Background())
			if err != nil || stale.Generation() != 12 {
				t.Fatalf("current: generation %d, %v", stale.Generation(), err)
			}
			// Right after the reader read generation 12: the writer
			// commits on to generation 40, its checkpoints become active
			// and a sweep removes the history below the oldest listed.
			hooked.hook = func() {
				for i := range 28 {
					w.appendTo(fmt.Sprintf("f%d.md", i%3), fmt.Sprint("more ", i, "\n"))
					w.commit(fmt.Sprint("more", i))
					w.e.publishing.Background.Wait()
				}
				w.e.publishing.Background.Sweep(context.Background())
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
			if _, err := probe.e.env.Sync(context.Background(), stale); !errors.Is(err, remote.ErrMissingPack) && !isMissing(err) {
				t.Fatalf("the stale manifest still reads (%v): the race was not exercised", err)
			}
			w.pull()
			equalMaps(t, "reader", r.files(), w.files())
		})
	}
}

func isMissing(err error) bool {
	var de *diag.Error
	return errors.As(err, &de) && de.Reason == diag.ReasonMissingPack
}
