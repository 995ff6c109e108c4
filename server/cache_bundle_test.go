package server

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/objcache"
)

// cacheFiles counts the files of the object caches under the private root
// priv (not temporary files or merged indexes): each one cost a create.
func cacheFiles(tb testing.TB, priv string) int {
	tb.Helper()
	all, err := filepath.Glob(filepath.Join(priv, "stores", "*", "chains", "*", "*"))
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, p := range all {
		if !strings.HasPrefix(filepath.Base(p), ".") {
			n++
		}
	}
	return n
}

// cachedBundles returns the bundle files of every chain cache of a.
func cachedBundles(t *testing.T, a *agent) []string {
	t.Helper()
	bundles, err := filepath.Glob(filepath.Join(a.e.private, "stores", "*", "chains", "*", "*.bundle"))
	if err != nil {
		t.Fatal(err)
	}
	return bundles
}

// bundledScene: b committed n.md and then changed it, and a pulled both
// commits at once; it returns the one bundle that pull kept them in.
func bundledScene(t *testing.T) (a, b *agent, bundle string) {
	store := memstore.New()
	a, b = newAgent(t, store), newAgent(t, store)
	a.pull()
	b.pull()
	b.write("n.md", "top\n"+filler+"end\n")
	b.commit("one")
	b.appendTo("n.md", "more\n")
	b.commit("two")
	before := cacheFiles(t, a.e.private)
	a.pull()
	if n := cacheFiles(t, a.e.private) - before; n != 1 {
		t.Fatalf("a pull that fetched two packs created %d cache files, want one", n)
	}
	bundles := cachedBundles(t, a)
	if len(bundles) != 1 {
		t.Fatalf("cached bundles: %v", bundles)
	}
	if got, want := a.read("n.md"), "top\n"+filler+"end\nmore\n"; got != want {
		t.Fatalf("a's n.md = %q", got)
	}
	return a, b, bundles[0]
}

func TestSyncKeepsFetchedPacksInOneFile(t *testing.T) {
	bundledScene(t)
}

// A damaged bundle is dropped whole and its packs fetched again: the
// commit that needed the damaged content succeeds with its true merge.
func TestDamagedCachedBundleIsHealed(t *testing.T) {
	a, b, bundle := bundledScene(t)
	// Damage byte 200 of every bundled pack (inside n.md's content, as in
	// damagedCacheScene), found through the bundle header (docs/format.md
	// §5.2: header length u32 at 12, count u32 at 16, then per pack a u16
	// name length, the name, u64 offset, u64 length).
	data, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	at := 20
	for range le.Uint32(data[16:]) {
		at += 2 + int(le.Uint16(data[at:]))
		flipByte(t, bundle, int64(le.Uint64(data[at:]))+200)
		at += 16
	}
	b.write("n.md", "TOP\n"+filler+"end\nmore\n")
	b.commit("three")
	a.appendTo("n.md", "mine\n")
	res := a.commit("four")
	equalMaps(t, "diffstat", stats(res.Files), map[string][2]int{"n.md": {1, 0}})
	if got, want := a.read("n.md"), "TOP\n"+filler+"end\nmore\nmine\n"; got != want {
		t.Fatalf("a's n.md = %q", got)
	}
	verifyCaches(t, a)
	b.pull()
	a.appendTo("n.md", "again\n")
	a.commit("five")
}

// verifyCaches fails unless every pack in a's object caches verifies.
func verifyCaches(t *testing.T, a *agent) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(a.e.private, "stores", "*", "chains", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		s, err := cas.OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		names, broken := s.Packs()
		if len(broken) != 0 {
			t.Errorf("cache %s: broken files %v", dir, broken)
		}
		for _, name := range names {
			if err := s.VerifyPack(name); err != nil {
				t.Errorf("cache %s: %v", dir, err)
			}
		}
		s.Close()
	}
}

// threeCommitsScene: a pulled the empty notebook, then b committed three
// files, one commit each.
func threeCommitsScene(t *testing.T) (*memstore.Mem, *agent) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	b.pull()
	for i := range 3 {
		b.write(fmt.Sprintf("n%d.md", i), filler)
		b.commit(fmt.Sprint("commit ", i))
	}
	return store, a
}

// A sync whose packs exceed objcache.BundleBytes keeps them in several files
// rather than holding them all in memory.
func TestSyncBundlesAreBounded(t *testing.T) {
	defer func(n int) { objcache.BundleBytes = n }(objcache.BundleBytes)
	objcache.BundleBytes = 1 // every pack is over the bound: each is kept alone
	_, a := threeCommitsScene(t)
	before := cacheFiles(t, a.e.private)
	a.pull()
	if n := cacheFiles(t, a.e.private) - before; n != 3 {
		t.Fatalf("a pull of three packs over the bound created %d cache files, want 3", n)
	}
	if bundles := cachedBundles(t, a); len(bundles) != 0 {
		t.Fatalf("bundles: %v", bundles)
	}
	for i := range 3 {
		if got := a.read(fmt.Sprintf("n%d.md", i)); got != filler {
			t.Fatalf("n%d.md = %q", i, got)
		}
	}
	verifyCaches(t, a)
}

// When one pack cannot be fetched, the packs that were are kept (in one
// bundle): the next sync does not download them again.
func TestSyncKeepsFetchedPacksWhenOneFails(t *testing.T) {
	store, a := threeCommitsScene(t)
	keys := proposalKeys(t, store)
	if len(keys) != 3 {
		t.Fatalf("proposals %v", keys)
	}
	// The last generation's pack is gone (the others are what its trees
	// are deltas of, so they can be kept without it).
	if err := store.Delete(t.Context(), keys[2]); err != nil {
		t.Fatal(err)
	}
	// The failure comes last, once the other two packs were fetched.
	store.Inject(memstore.Fault{Op: memstore.OpGet, KeyPrefix: keys[2], Delay: 300 * time.Millisecond})
	_, err := a.e.Pull(t.Context(), "")
	domainErr(t, err, diag.CodeStorageIntegrity, diag.ReasonMissingPack)
	if bundles := cachedBundles(t, a); len(bundles) != 1 {
		t.Fatalf("bundles after a pull that fetched two of three packs: %v", bundles)
	}
	dirs, _ := filepath.Glob(filepath.Join(a.e.private, "stores", "*", "chains", "*"))
	kept := 0
	for _, dir := range dirs {
		s, err := cas.OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		names, _ := s.Packs()
		kept += len(names)
		s.Close()
	}
	if kept != 2 {
		t.Fatalf("%d packs kept, want the 2 fetched", kept)
	}
}
