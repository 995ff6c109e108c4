package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// agentIn is an agent with a directory of its own whose private root is
// priv: agents of one user on one machine share the default one.
func agentIn(t *testing.T, store remote.Store, priv string) *agent {
	t.Helper()
	return newAgent(t, store, func(c *Config) { c.PrivateRoot = priv })
}

// exchanged counts the GETs of reqs by kind of the objects writers
// exchange: proposal versions, group packs and segments (registered
// descriptors apart: they are read once per fold that copies them).
func exchanged(reqs []string) (proposals, groups, segments map[string]int) {
	proposals, groups, segments = map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range reqs {
		key, ok := strings.CutPrefix(r, "GET ")
		if !ok {
			continue
		}
		switch {
		case isProposal(key):
			proposals[key]++
		case strings.HasPrefix(key, remote.GroupsPrefix):
			groups[key]++
		case strings.HasPrefix(key, remote.SegmentsPrefix):
			segments[key]++
		}
	}
	return proposals, groups, segments
}

// isProposal reports whether key is a proposal version's.
func isProposal(key string) bool {
	kind, _, _, _, _ := remote.ParseProposalEntry(key)
	return kind == remote.EntryProposal
}

// Two engines sharing one private root on one store (two agents of one
// user on one machine, each its own directory) never download from the
// store a proposal the other uploaded, and read each group pack and
// segment from it at most once between them: neither when one folds the
// other's proposal into its group (the fold reads every member's
// proposal), nor when each catches up on the other's commits. With a
// private root each, the fold reads the other's proposal from the store:
// what the shared root saves, and what makes this test able to fail.
func TestSharedPrivateRootFetchesEachProposalAtMostOnce(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(map[bool]string{true: "shared root", false: "a root each"}[shared], func(t *testing.T) {
			mem := memstore.New()
			rec := &remotetest.Recorder{Store: mem}
			// c's first LIST waits until d's proposal is in the store, so
			// both LISTs show both proposals and the first of the two in
			// fold order folds the other's too, whichever it is.
			dRegistered, cListing := make(chan struct{}), make(chan struct{})
			gated := &gateStore{Store: rec, listing: cListing, release: dRegistered}
			signalling := &gateStore{Store: rec, registered: dRegistered}
			privC, privD := t.TempDir(), t.TempDir()
			if shared {
				privD = privC
			}
			c, d := agentIn(t, gated, privC), agentIn(t, signalling, privD)
			// The seed and the pulls are not gated.
			gated.off.Store(true)
			signalling.off.Store(true)
			// Seeded by a third directory: a directory whose last commit
			// was its own write alone skips the LIST (the streak).
			seed := agentIn(t, rec, privC)
			seed.pull()
			seed.write("c.md", "c\n")
			seed.write("d.md", "d\n")
			seed.commit("seed")
			c.pull()
			d.pull()
			c.appendTo("c.md", "c 1\n")
			d.appendTo("d.md", "d 1\n")
			rec.Take()
			gated.off.Store(false)
			signalling.off.Store(false)

			errs := make([]error, 2)
			var wg sync.WaitGroup
			wg.Go(func() { _, errs[0] = c.e.Commit(context.Background(), "", "c 1") })
			<-cListing
			wg.Go(func() { _, errs[1] = d.e.Commit(context.Background(), "", "d 1") })
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatalf("commit: %v", err)
				}
			}
			gated.off.Store(true)
			signalling.off.Store(true)
			// In turns: each catches up on the other's commits.
			for i := range 3 {
				c.appendTo("c.md", fmt.Sprintf("c %d\n", i+2))
				c.commit(fmt.Sprintf("c %d", i+2))
				d.appendTo("d.md", fmt.Sprintf("d %d\n", i+2))
				d.commit(fmt.Sprintf("d %d", i+2))
			}
			c.pull()
			proposals, groups, segments := exchanged(rec.Take())
			if !shared {
				if len(proposals) == 0 {
					t.Fatalf("a root each: no proposal read from the store, want the folded one at least")
				}
				return
			}
			if len(proposals) != 0 {
				t.Fatalf("proposals read from the store %v, want none (the other engine of this host uploaded each one)", proposals)
			}
			for _, m := range []map[string]int{groups, segments} {
				for key, n := range m {
					if n > 1 {
						t.Fatalf("%s read from the store %d times, want at most once between the two engines", key, n)
					}
				}
			}
			want := map[string]string{"c.md": "c\nc 1\nc 2\nc 3\nc 4\n", "d.md": "d\nd 1\nd 2\nd 3\nd 4\n"}
			equalMaps(t, "c", c.files(), want)
			equalMaps(t, "d", d.files(), want)
		})
	}
}

// gateStore holds the first LIST of proposals until release is closed
// (closing listing when it arrives), or closes registered once a proposal
// PUT is acknowledged; off: neither.
type gateStore struct {
	remote.Store
	off        atomic.Bool
	listing    chan struct{}
	release    chan struct{}
	registered chan struct{}
	once       sync.Once
}

func (g *gateStore) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	if !g.off.Load() && g.listing != nil && strings.HasPrefix(prefix, remote.ProposalsPrefix) {
		g.once.Do(func() {
			close(g.listing)
			select {
			case <-g.release:
			case <-ctx.Done():
			}
		})
	}
	return g.Store.List(ctx, prefix)
}

func (g *gateStore) Put(ctx context.Context, key string, data []byte) error {
	err := g.Store.Put(ctx, key, data)
	if err == nil && !g.off.Load() && g.registered != nil && isProposal(key) {
		g.once.Do(func() { close(g.registered) })
	}
	return err
}
