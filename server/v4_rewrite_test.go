package server

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// pausingStore holds its writer right after it registers a proposal
// (once armed), until released: a writer that waits while others fold.
type pausingStore struct {
	remote.Store
	armed      atomic.Bool
	registered chan struct{}
	release    chan struct{}
	gets       atomic.Int64 // GETs after the release
}

func (s *pausingStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	select {
	case <-s.release:
		s.gets.Add(1)
	default:
	}
	return s.Store.Get(ctx, key)
}

func (s *pausingStore) Put(ctx context.Context, key string, data []byte) error {
	err := s.Store.Put(ctx, key, data)
	if err == nil && strings.HasPrefix(key, remote.ProposalsPrefix) && !strings.Contains(key, ".fold.") && s.armed.CompareAndSwap(true, false) {
		close(s.registered)
		<-s.release
	}
	return err
}

// commitOutcome is what a commit run in the background returned.
type commitOutcome struct {
	res *Result
	err error
}

// commitUntilRegistered starts a's commit in the background and returns
// once its proposal is registered and its call paused there (until
// s.release is closed); the channel yields the commit's outcome.
func (s *pausingStore) commitUntilRegistered(ctx context.Context, a *agent, message string) <-chan commitOutcome {
	s.armed.Store(true)
	done := make(chan commitOutcome, 1)
	go func() {
		res, err := a.e.Commit(ctx, "", message)
		done <- commitOutcome{res, err}
	}()
	<-s.registered
	return done
}

// A commit that another writer's fold re-parents, and that learns of its
// acceptance only after later groups: its directory ends holding the
// tree of its own generation, which the object cache (caught up to the
// newest state through a checkpoint past that generation, or through a
// rollup whose block holds it) does not hold; the reader fetches that
// generation's packs and those since the generation it built on. The
// store stays whole: the group pack carries the trees the re-parented
// proposal's deltas are based on, which a chain started by a later
// checkpoint does not hold.
func TestV4RewriteToAnOlderGeneration(t *testing.T) {
	for _, tc := range []struct {
		name        string
		every, seed int  // CheckpointPacks; the generations before a's
		between     bool // a checkpoint of the generation between a's parent and a's
	}{
		{"checkpoint", 4, 1, false},
		{"rollup", 1000, 5, false},
		{"checkpoint between", 1000, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) { rewriteToAnOlderGeneration(t, tc.every, tc.seed, tc.between) })
	}
}

func rewriteToAnOlderGeneration(t *testing.T, every, seed int, between bool) {
	ctx := context.Background()
	store := memstore.New()
	clock := newStepClock()
	model := func(c *Config) { c.CheckpointPacks, c.Sleep, c.Now = every, clock.Wait, clock.Now }
	b := newAgent(t, store, model)
	b.pull()
	b.write("top.md", "top\n")
	for g := 1; g <= seed; g++ {
		b.write("dir/b.md", fmt.Sprintf("b %d\n", g))
		b.commit(fmt.Sprint("b", g))
		b.e.publishing.Background.Wait()
	}
	ps := &pausingStore{Store: store, registered: make(chan struct{}), release: make(chan struct{})}
	a := newAgent(t, ps, model)
	a.pull()
	first := orderedIDs(1)[0] // before a's call: first in the fold order
	a.write("dir/a.md", "a\n")
	done := ps.commitUntilRegistered(ctx, a, "a")
	// Another writer folds its change and a's, in that order: a's,
	// built on seed, is re-parented onto seed+1.
	want := uint64(seed + 2)
	w := newV4Writer(t, store)
	if g := w.commitID(first, "w", map[string]string{"dir/w.md": "w\n"}); g != want-1 {
		t.Fatalf("w at %d", g)
	}
	if between {
		// The checkpoint of w's generation, which b's next fold makes
		// the active one: a's generation is then the first of its
		// chain, though a's proposal is based on the trees of seed.
		src, err := storeObjects(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		nb := remote.Open(store, remote.Options{})
		st, err := nb.ReadCurrent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, data, err := nb.BuildCheckpointV4(ctx, st, want-1, src); err != nil || data == nil {
			t.Fatalf("checkpoint through %d: %v", want-1, err)
		}
	}
	// Later generations change dir/ each time (a's trees leave every
	// later closure), w's file too: its version at a's generation is then
	// only in w's proposal, which a's cache never held.
	b.pull()
	last := int(want) + 12
	for g := int(want) + 1; g <= last; g++ {
		b.write("dir/b.md", fmt.Sprintf("b %d\n", g))
		b.write("dir/w.md", fmt.Sprintf("w %d\n", g))
		if res := b.commit(fmt.Sprint("b", g)); res.Generation != uint64(g) {
			t.Fatalf("b's commit at %d, want %d", res.Generation, g)
		}
		b.e.publishing.Background.Wait()
	}
	m := currentV4(t, store)
	if between && m.Checkpoint.Through != want-1 {
		t.Fatalf("active checkpoint through %d, want %d", m.Checkpoint.Through, want-1)
	}
	skipped := m.Checkpoint.Through >= want-1
	for _, r := range remote.PlanCatchUpV4(m, uint64(seed)) {
		skipped = skipped || r.Rollup != nil && r.First <= want && want < r.Last
	}
	if !skipped {
		t.Fatalf("checkpoint through %d, rollups %+v: nothing a catch-up takes skips generation %d", m.Checkpoint.Through, m.Rollups, want)
	}
	close(ps.release)
	out := <-done
	if out.err != nil {
		t.Fatalf("a's commit: %v", out.err)
	}
	if out.res.Generation != want {
		t.Fatalf("a's commit reports generation %d, want %d", out.res.Generation, want)
	}
	t.Logf("a's commit, from its registration on: %d GETs (catch-up to %d included)", ps.gets.Load(), last)
	equalMaps(t, "a's directory", a.files(), map[string]string{"dir/a.md": "a\n", "dir/w.md": "w\n", "dir/b.md": fmt.Sprintf("b %d\n", seed), "top.md": "top\n"})
	// A directory that starts afresh reads on from the checkpoint.
	c := newAgent(t, store, model)
	c.pull()
	equalMaps(t, "a fresh directory", c.files(), b.files())
	rep, err := remote.Verify(ctx, store, remote.VerifyOptions{})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep.Findings, err)
	}
}
