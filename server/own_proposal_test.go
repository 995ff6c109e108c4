package server

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// getRecorder records the keys of its GETs.
type getRecorder struct {
	remote.Store
	mu   sync.Mutex
	keys []string
}

func (s *getRecorder) Get(ctx context.Context, key string) ([]byte, string, error) {
	s.mu.Lock()
	s.keys = append(s.keys, key)
	s.mu.Unlock()
	return s.Store.Get(ctx, key)
}

// A commit that another writer's fold re-parents keeps its own proposal's
// pack in its cache, as one accepted as built does: bringing its
// directory to its generation, it never downloads what it uploaded (it
// did, once per commit in a group).
func TestV4ReparentedCommitKeepsItsOwnProposal(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	clock := newStepClock()
	model := func(c *Config) { c.Sleep, c.Now = clock.Wait, clock.Now }
	b := newAgent(t, store, model)
	b.pull()
	b.write("top.md", "top\n")
	b.commit("b1")
	b.e.publishing.Background.Wait()

	rec := &getRecorder{Store: store}
	ps := &pausingStore{Store: rec, registered: make(chan struct{}), release: make(chan struct{})}
	a := newAgent(t, ps, model)
	a.pull()
	first := orderedIDs(1)[0] // before a's call: first in the fold order
	a.write("a.md", "a\n")
	done := ps.commitUntilRegistered(ctx, a, "a")
	// Another writer folds its change and a's, in that order: a's, built
	// on 1, is re-parented onto 2.
	if g := newV4Writer(t, store).commitID(first, "w", map[string]string{"w.md": "w\n"}); g != 2 {
		t.Fatalf("w at %d", g)
	}
	close(ps.release)
	out := <-done
	if out.err != nil || out.res.Generation != 3 {
		t.Fatalf("a's commit: %+v %v", out.res, out.err)
	}
	inc, ok := currentV4(t, store).Increment(3)
	if !ok || inc.Group == (remote.GroupRef{}) {
		t.Fatalf("a's generation was not re-parented: %+v", inc)
	}
	for _, k := range rec.keys {
		if strings.HasPrefix(k, remote.ProposalsPrefix) && strings.Contains(k, inc.Publication) && !strings.Contains(k, ".fold.") {
			t.Errorf("a downloaded its own proposal %s", k)
		}
	}
	equalMaps(t, "a's directory", a.files(), map[string]string{"a.md": "a\n", "w.md": "w\n", "top.md": "top\n"})
}
