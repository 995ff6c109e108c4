package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/objcache"
)

// chainCaches lists the chain cache directories in a's private root.
func chainCaches(t *testing.T, a *agent) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(a.e.private, "stores", "*", "chains", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, filepath.Base(d))
		}
	}
	sort.Strings(out)
	return out
}

// The object cache in P holds only the chains the store keeps (the active
// and the retained ones), however many checkpoints pass, both for the
// writer that checkpoints and for one that only observes checkpoints.
func TestChainCachesArePruned(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, withCheckpoints(2, 1))
	b := newAgent(t, store, withCheckpoints(1000, 1))
	a.pull()
	b.pull()
	// The cache of a chain newer than any this test reaches, as another
	// process sharing b's P could hold: it must survive b's pruning.
	newer := filepath.Join(b.e.env.Caches.Dir(), "999999-0123456789abcdef0123456789abcdef")
	if err := os.MkdirAll(newer, 0o700); err != nil {
		t.Fatal(err)
	}
	// A checkpoint is built by the commit of every second generation
	// past the active one (a's setting; b's never comes due): a commits
	// twice a round so that some of its generations are due.
	for i := range 12 {
		for j := range 2 {
			a.write(fmt.Sprintf("a%d-%d.md", i, j), fmt.Sprint(i, "\n"))
			a.commit(fmt.Sprint("a", i))
			a.e.publishing.Background.Wait() // let each checkpoint finish
		}
		b.write(fmt.Sprintf("b%d.md", i), fmt.Sprint(i, "\n"))
		b.commit(fmt.Sprint("b", i))
	}
	st, err := remote.Open(store, remote.Options{}).ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Manifest.Checkpoints) == 0 || st.Manifest.Checkpoint.Through < 10 {
		t.Fatalf("too few checkpoints to test: through %d, %d retained", st.Manifest.Checkpoint.Through, len(st.Manifest.Checkpoints))
	}
	keep := map[string]bool{objcache.KeyAt(st.Manifest.Checkpoint): true}
	for _, cp := range st.Manifest.Checkpoints {
		keep[objcache.KeyAt(cp)] = true
	}
	if _, err := os.Stat(newer); err != nil {
		t.Fatalf("a newer chain's cache was removed: %v", err)
	}
	if err := os.RemoveAll(newer); err != nil {
		t.Fatal(err)
	}
	for _, ag := range []*agent{a, b} {
		ag.pull()
		caches := chainCaches(t, ag)
		if len(caches) > len(keep) {
			t.Errorf("%d chain caches for %d chains the store keeps: %v", len(caches), len(keep), caches)
		}
		for _, c := range caches {
			if !keep[c] {
				t.Errorf("cache %s belongs to no chain the store keeps", c)
			}
		}
	}
	// Both still work across the pruning.
	a.write("last.md", "a\n")
	a.commit("last a")
	b.pull()
	equalMaps(t, "b's files", b.files(), a.files())
}

// A directory of the same private root last synchronised several
// checkpoints ago still merges: its base content lives only in the cache
// of its old chain (the store dropped those packs), which is kept.
func TestPruneKeepsTheChainOfAnOldBaseline(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, withCheckpoints(2, 1))
	ctx := context.Background()
	stale := filepath.Join(a.ws, "stale")
	a.pull()
	a.write("shared.md", "1\n2\n3\n4\n5\n6\n")
	a.commit("c0")
	if _, err := a.e.Pull(ctx, stale); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		a.write("shared.md", fmt.Sprintf("1\n2\n3\n4\n5\nsix %d\n", i))
		a.commit(fmt.Sprint("c", i+1))
		a.e.publishing.Background.Wait()
	}
	if err := os.WriteFile(filepath.Join(stale, "shared.md"), []byte("one\n2\n3\n4\n5\n6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.e.Commit(ctx, stale, "stale edit"); err != nil {
		t.Fatalf("commit of the stale directory: %v", err)
	}
	a.pull()
	if got := a.read("shared.md"); got != "one\n2\n3\n4\n5\nsix 9\n" {
		t.Fatalf("merged shared.md = %q", got)
	}
}
