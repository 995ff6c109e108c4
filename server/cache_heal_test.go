package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// filler is n.md's body: distinct lines, so the pack holding them does
// not compress to a few bytes and byte 200 is inside the file's content.
var filler = func() string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "line %d of the notebook, %x\n", i, i*7919)
	}
	return b.String()
}()

// cachedPacks returns the pack files of every chain cache of a.
func cachedPacks(t *testing.T, a *agent) []string {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(a.e.private, "stores", "*", "chains", "*", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return packs
}

// flipByte damages one byte of a file in place, as a bad disk would.
func flipByte(t *testing.T, name string, at int64) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

// damagedCacheScene: a committed n.md, then its cached pack was damaged,
// then b changed n.md (so a's next commit must read the damaged content to
// merge).
func damagedCacheScene(t *testing.T) (store *memstore.Mem, a, b *agent) {
	store = memstore.New()
	a, b = newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("n.md", "top\n"+filler+"end\n")
	a.commit("one")
	packs := cachedPacks(t, a)
	if len(packs) != 1 {
		t.Fatalf("cached packs: %v", packs)
	}
	flipByte(t, packs[0], 200)
	b.pull()
	b.write("n.md", "TOP\n"+filler+"end\n")
	b.commit("two")
	return store, a, b
}

// A damaged cached pack is dropped and fetched again from the store, which
// is the authority: the commit succeeds, with its true diffstat.
func TestDamagedCachedPackIsHealedOnCommit(t *testing.T) {
	_, a, b := damagedCacheScene(t)
	a.appendTo("n.md", "mine\n")
	res := a.commit("three")
	equalMaps(t, "diffstat", stats(res.Files), map[string][2]int{"n.md": {1, 0}})
	want := "TOP\n" + filler + "end\nmine\n"
	if got := a.read("n.md"); got != want {
		t.Fatalf("a's n.md = %q", got)
	}
	b.pull()
	if got := b.read("n.md"); got != want {
		t.Fatalf("b's n.md = %q", got)
	}
	a.appendTo("n.md", "again\n")
	a.commit("four")
}

func TestDamagedCachedPackIsHealedOnPull(t *testing.T) {
	_, a, _ := damagedCacheScene(t)
	a.appendTo("n.md", "mine\n")
	a.pull()
	want := "TOP\n" + filler + "end\nmine\n"
	if got := a.read("n.md"); got != want {
		t.Fatalf("a's n.md = %q", got)
	}
}

// When the store's copy is damaged too, the store is at fault: the error
// is CORRUPT_PACK, not a cache problem. (The host's copy of the proposal a
// uploaded is gone as well: a sound one would be read instead of the
// store's, server/storeview/hostobjects.go.)
func TestDamagedCacheAndStoreIsCorruptPack(t *testing.T) {
	store, a, _ := damagedCacheScene(t)
	if err := os.RemoveAll(filepath.Join(a.e.storeDir(), "objects")); err != nil {
		t.Fatal(err)
	}
	first := proposalKeys(t, store)[0] // generation 1: a's pack, damaged in a's cache
	data, _, err := store.Get(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-200] ^= 0xff // in the pack, past the proposal's descriptor
	if err := store.Put(t.Context(), first, data); err != nil {
		t.Fatal(err)
	}
	a.appendTo("n.md", "mine\n")
	_, err = a.e.Commit(t.Context(), "", "three")
	domainErr(t, err, diag.CodeStorageIntegrity, diag.ReasonCorruptPack)
}

// The diffstat of a commit that merged nothing reads the parent's content
// from the cache: a damaged pack there is healed too, and the report is
// the true one, never an empty list.
func TestDamagedCachedPackDiffstat(t *testing.T) {
	a := newAgent(t, memstore.New())
	a.pull()
	a.write("n.md", "top\n"+filler+"end\n")
	a.commit("one")
	flipByte(t, cachedPacks(t, a)[0], 200)
	a.appendTo("n.md", "mine\n")
	res := a.commit("two")
	equalMaps(t, "diffstat", stats(res.Files), map[string][2]int{"n.md": {1, 0}})
}

// Log reads the diffstat of each commit from the cache: a damaged pack
// there is healed as well.
func TestDamagedCachedPackIsHealedOnLog(t *testing.T) {
	a := newAgent(t, memstore.New())
	a.pull()
	a.write("n.md", "top\n"+filler+"end\n")
	a.commit("one")
	flipByte(t, cachedPacks(t, a)[0], 200)
	entries, err := a.e.Log(t.Context(), 5)
	if err != nil {
		t.Fatalf("log: %v", err)
	}
	if len(entries) != 1 || len(entries[0].Files) != 1 || entries[0].Files[0].Insertions != 42 {
		t.Fatalf("log: %+v", entries)
	}
}

// Wherever the damage falls (a file, a tree or the commit object), Log
// heals and reports the publication; it never answers a shorter history.
func TestDamagedCachedPackAnywhereIsHealedOnLog(t *testing.T) {
	for at := int64(0); ; at += 29 {
		a := newAgent(t, memstore.New())
		a.pull()
		a.write("n.md", "top\n"+filler+"end\n")
		a.commit("one")
		p := cachedPacks(t, a)[0]
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if at >= fi.Size() {
			return
		}
		flipByte(t, p, at)
		entries, err := a.e.Log(t.Context(), 5)
		if err != nil || len(entries) != 1 || len(entries[0].Files) != 1 {
			t.Fatalf("damage at %d of %d: log: %v %+v", at, fi.Size(), err, entries)
		}
	}
}
