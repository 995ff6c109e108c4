package remote_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// A fold still in flight has uploaded its segments (a write of twelve
// members folds some of them into segments of their own) and not yet
// written `current`: a sweep in between keeps them, since the fold may
// still land (docs/storage.md §5.1 rule 5), and every one the `current`
// it then writes lists is there.
func TestCleanupV4KeepsTheSegmentsOfAFoldInFlight(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := newLeakSim(t, seed)
			s.run(60 + seed)
			mbs, group, data := s.members(12)
			next, ups, err := remote.NextV4(s.m, "0123456789abcdef0123456789abcdef", 1, mbs, group, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range ups {
				s.put(u.Key, u.Data)
			}
			s.put(group.Key(), data)
			if res := s.sweep(); len(res.Deleted) == 0 {
				t.Fatal("the sweep deleted nothing: the test does not reach the rule")
			}
			enc, err := remote.EncodeManifestV4(next)
			if err != nil {
				t.Fatal(err)
			}
			s.put(remote.CurrentKey, enc)
			if len(ups) == 0 {
				t.Fatal("the fold uploaded no segment")
			}
			for _, u := range ups {
				if _, err := s.store.Head(s.ctx, u.Key); err != nil {
					t.Errorf("the fold's write lists %s: %v", u.Key, err)
				}
			}
		})
	}
}

// getCounter counts the GETs of each key (the sweep reads segments in
// parallel).
type getCounter struct {
	remote.Store
	mu   sync.Mutex
	gets map[string]int
}

func (g *getCounter) Get(ctx context.Context, key string) ([]byte, string, error) {
	g.mu.Lock()
	g.gets[key]++
	g.mu.Unlock()
	return g.Store.Get(ctx, key)
}

// A sweep finds the rollup packs a registration names from the keys
// alone: it GETs no registration a fold may still take and no pack one
// names, only the packs no registration names (rule 6), each once.
func TestCleanupV4ReadsNoRegisteredRollup(t *testing.T) {
	s := newLeakSim(t, 7)
	s.run(120)
	c := s.m.Generation
	regs, err := s.store.List(s.ctx, remote.ProposalsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, o := range regs {
		kind, g, _, _, _ := remote.ParseProposalEntry(o.Key)
		if kind != remote.EntryRollup || g <= s.m.Checkpoint.Through {
			continue
		}
		data, _, err := s.store.Get(s.ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		r, err := remote.DecodeRegistered(o.Key, data)
		if err != nil {
			t.Fatal(err)
		}
		named[o.Key], named[r.Rollup.Key()] = true, true
	}
	if len(named) == 0 {
		t.Fatal("no registration above the active checkpoint: the test does not reach the rule")
	}
	counter := &getCounter{Store: s.store, gets: map[string]int{}}
	n := remote.Open(counter, remote.Options{})
	if _, err := n.CleanupV4(s.ctx, remote.CleanupV4Options{Window: s.w}); err != nil {
		t.Fatal(err)
	}
	read := 0
	for key, times := range counter.gets {
		if named[key] {
			t.Errorf("at %d the sweep read %s, which a registration a fold may take names (or is)", c, key)
		}
		if strings.HasPrefix(key, remote.RollupsPrefix) {
			read++
			if times > 1 {
				t.Errorf("%s read %d times", key, times)
			}
		}
	}
	if read == 0 {
		t.Fatal("no unregistered rollup pack read: the test does not reach the rule")
	}
}
