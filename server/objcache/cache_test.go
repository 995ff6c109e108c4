package objcache

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// newCaches returns caches under storeDir, as an engine (or another
// process sharing P) opens them; no store is read.
func newCaches(t *testing.T, storeDir string, oldest func() (uint64, bool)) *Caches {
	t.Helper()
	if oldest == nil {
		oldest = func() (uint64, bool) { return 0, false }
	}
	cs := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), func() string { return storeDir }, oldest)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// chunk is an object of n bytes that compress poorly (made by an
// xorshift generator, seeded), so damage to its stored bytes is damage to
// its record.
func chunk(t *testing.T, seed uint64, n int) cas.Object {
	t.Helper()
	data := make([]byte, n)
	x := seed*2 + 1 // odd, never zero
	for i := range data {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x)
	}
	o, err := cas.ChunkObject(data)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// keep adds a pack of objs to the cache named key of cs, as sync keeps a
// fetched pack, and returns the pack's name in the cache.
func keep(t *testing.T, cs *Caches, key, packKey string, objs ...cas.Object) string {
	t.Helper()
	w := cas.NewPackWriter()
	for _, o := range objs {
		if err := w.Put(o); err != nil {
			t.Fatal(err)
		}
	}
	data, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	c, err := cs.Open(key)
	if err != nil {
		t.Fatal(err)
	}
	name := PackName(remote.PackRef{Key: packKey})
	if err := c.Store().AddPack(name, data); err != nil {
		t.Fatal(err)
	}
	return name
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

// A cache name starts with the generation its chain's checkpoint reaches,
// so caches order by age without a manifest; the empty notebook's is 0,
// and a name of another form (an older release's) has no age.
func TestCacheNamesCarryTheirAge(t *testing.T) {
	cp := remote.Checkpoint{Through: 12, Pack: remote.PackRef{Key: "checkpoints/12"}}
	if g, ok := chainThrough(KeyAt(cp)); !ok || g != 12 {
		t.Fatalf("age of %q = %d %v, want 12", KeyAt(cp), g, ok)
	}
	state := remote.State{Manifest: &remote.Manifest{Version: 2, Generation: 15, Checkpoint: cp}}
	if Key(state) != KeyAt(cp) {
		t.Fatalf("the cache of a version-2 state is %q, want its checkpoint's %q", Key(state), KeyAt(cp))
	}
	if Key(remote.State{}) != "empty" {
		t.Fatalf("the empty notebook's cache is %q", Key(remote.State{}))
	}
	if g, ok := chainThrough("empty"); !ok || g != 0 {
		t.Fatalf("age of the empty notebook's cache = %d %v", g, ok)
	}
	if _, ok := chainThrough("0123456789abcdef"); ok {
		t.Fatal("a name of another form was dated")
	}
	if KeyAt(remote.Checkpoint{}) == KeyAt(cp) {
		t.Fatal("the genesis chain and a checkpoint's share a cache")
	}
}

// An object the current chain's cache lacks is read from an older cache
// of the same store, even one this process never opened (another process
// created it); what no cache holds is ErrNotFound.
func TestSourceFallsBackToOlderCaches(t *testing.T) {
	dir := t.TempDir()
	old := chunk(t, 1, 4096)
	other := newCaches(t, dir, nil)
	keep(t, other, "5-older", "packs/a", old)

	cs := newCaches(t, dir, nil)
	current := chunk(t, 2, 4096)
	keep(t, cs, "9-current", "packs/b", current)
	primary, err := cs.Open("9-current")
	if err != nil {
		t.Fatal(err)
	}
	src := cs.Source(primary)
	for _, o := range []cas.Object{current, old} {
		got, err := src.Get(o.ID)
		if err != nil || got.ID != o.ID {
			t.Fatalf("Get(%v) = %v, %v", o.ID, got.ID, err)
		}
	}
	if _, err := src.Get(chunk(t, 3, 10).ID); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("an object no cache holds: %v, want ErrNotFound", err)
	}
	// A cache created after the source first fell back is read after a
	// rescan.
	later := chunk(t, 4, 4096)
	keep(t, other, "7-later", "packs/c", later)
	src.Rescan()
	if _, err := src.Get(later.ID); err != nil {
		t.Fatalf("after a rescan: %v", err)
	}
}

// A damaged copy in an older chain's cache surfaces as corrupt, not as
// missing, so the engine heals the cache instead of reporting the object
// lost; healing drops the damaged pack and forgets the cache's reach, so
// the next sync fetches it again from the store.
func TestDamagedCopyIsCorruptAndHealed(t *testing.T) {
	dir := t.TempDir()
	o := chunk(t, 5, 8192)
	writer := newCaches(t, dir, nil)
	name := keep(t, writer, "3-older", "packs/a", o)
	c, err := writer.Open("3-older")
	if err != nil {
		t.Fatal(err)
	}
	c.SetReach(3, o.ID)
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	packs, err := filepath.Glob(filepath.Join(writer.Dir(), "3-older", "*.pack"))
	if err != nil || len(packs) != 1 {
		t.Fatalf("pack files %v %v", packs, err)
	}
	flipByte(t, packs[0], 200)

	cs := newCaches(t, dir, nil)
	primary, err := cs.Open("9-current")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Source(primary).Get(o.ID); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("a damaged copy in an older cache: %v, want ErrCorrupt", err)
	}
	if !cs.Heal() {
		t.Fatal("Heal removed nothing")
	}
	older, err := cs.Open("3-older")
	if err != nil {
		t.Fatal(err)
	}
	if older.Store().HasPack(name) {
		t.Fatal("the damaged pack is still in the cache")
	}
	if r := older.Reach(); r != 0 {
		t.Fatalf("reach after healing = %d, want 0 (fetch the chain again)", r)
	}
	if again := newCaches(t, dir, nil); mustOpen(t, again, "3-older").Reach() != 0 {
		t.Fatal("another process still reads the healed cache's reach")
	}
	if cs.Heal() {
		t.Fatal("a second Heal removed something")
	}
}

func mustOpen(t *testing.T, cs *Caches, key string) *Chain {
	t.Helper()
	c, err := cs.Open(key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The reach a process records is read by the others sharing P, but only
// while the cache holds the head it names: cache writes are not fsynced,
// so a crash may lose packs the record outlived. It never goes down.
func TestReachIsSharedAndNeedsItsHead(t *testing.T) {
	dir := t.TempDir()
	head := chunk(t, 6, 100)
	a := newCaches(t, dir, nil)
	keep(t, a, "0-x", "packs/a", head)
	ca := mustOpen(t, a, "0-x")
	ca.SetReach(4, head.ID)
	ca.SetReach(2, head.ID) // lower: ignored
	if r := mustOpen(t, newCaches(t, dir, nil), "0-x").Reach(); r != 4 {
		t.Fatalf("another process reads reach %d, want 4", r)
	}

	lost := chunk(t, 7, 100) // a head whose pack never reached the disk
	mustOpen(t, a, "1-y").SetReach(9, lost.ID)
	if r := mustOpen(t, newCaches(t, dir, nil), "1-y").Reach(); r != 0 {
		t.Fatalf("a reach whose head the cache lacks was trusted: %d", r)
	}
}

// The first sight of a chain removes the caches of chains older than
// every chain the manifest keeps, except the one holding the oldest
// baseline's content (the next merge of that directory reads its base
// there) and caches of another form, which cannot be dated.
func TestPruneKeepsWhatTheStoreAndBaselinesNeed(t *testing.T) {
	state := remote.State{Manifest: &remote.Manifest{
		Version:    2,
		Generation: 25,
		Checkpoint: remote.Checkpoint{Through: 20, Pack: remote.PackRef{Key: "checkpoints/20"}},
		Retained:   []remote.Chain{{Checkpoint: remote.Checkpoint{Through: 10, Pack: remote.PackRef{Key: "checkpoints/10"}}}},
	}}
	names := []string{"0-a", "5-b", "10-c", "20-d", "legacy"}
	for _, c := range []struct {
		baseline uint64
		found    bool
		want     []string
	}{
		{0, false, []string{"10-c", "20-d", "legacy"}},
		{7, true, []string{"10-c", "20-d", "5-b", "legacy"}},        // 5-b held generation 7
		{0, true, []string{"0-a", "10-c", "20-d", "5-b", "legacy"}}, // a baseline of generation 0 (or unreadable) pins everything
	} {
		dir := t.TempDir()
		cs := newCaches(t, dir, func() (uint64, bool) { return c.baseline, c.found })
		for _, n := range names {
			if err := os.MkdirAll(filepath.Join(cs.Dir(), n), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cs.prune(state)
		ents, err := os.ReadDir(cs.Dir())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("oldest baseline %d %v: caches kept %v, want %v", c.baseline, c.found, got, c.want)
		}
	}
}

// A commit's pack holds each object it is given once, and none of those
// certainly in the observed head's closure.
func TestSinkSkipsWhatTheParentHolds(t *testing.T) {
	inParent, added := chunk(t, 8, 64), chunk(t, 9, 64)
	s := NewSink(map[cas.ID]bool{inParent.ID: true}, false)
	for _, o := range []cas.Object{inParent, added, added} {
		if err := s.Put(o); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Added(added.ID) || s.Added(inParent.ID) {
		t.Fatalf("Added: %v %v", s.Added(added.ID), s.Added(inParent.ID))
	}
	data, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	p, err := cas.OpenPack(data)
	if err != nil {
		t.Fatal(err)
	}
	if ids := p.IDs(); !slices.Equal(ids, []cas.ID{added.ID}) {
		t.Fatalf("pack holds %v, want only %v", ids, added.ID)
	}
}

// The trees of paths the parent has no tree at go whole, and the others
// as deltas of the parent's: a first commit's pack reads on its own, and
// a new directory beside a changed one does not make the changed one go
// whole.
func TestSinkPackTreesNewPathsGoWhole(t *testing.T) {
	store, err := cas.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a, b, c := chunk(t, 1, 64), chunk(t, 2, 64), chunk(t, 3, 64)
	files := map[string]cas.ID{"x/y/a.md": a.ID, "x/b.md": b.ID}
	first := NewSink(nil, true)
	parent, err := cas.WriteTree(first, files)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.PackTrees(store, parent, cas.ID{}); err != nil {
		t.Fatal(err)
	}
	data, err := first.Finish()
	if err != nil {
		t.Fatal(err)
	}
	p, err := cas.OpenPack(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := cas.ReadTree(p, parent); err != nil || len(got) != 2 {
		t.Fatalf("the first pack on its own: %v, %v", got, err)
	}
	if err := store.AddPack("first", data); err != nil {
		t.Fatal(err)
	}
	files["x/y/a.md"], files["z/c.md"] = b.ID, c.ID
	next := NewSink(nil, true)
	root, err := cas.WriteTree(next, files)
	if err != nil {
		t.Fatal(err)
	}
	if err := next.PackTrees(store, root, parent); err != nil {
		t.Fatal(err)
	}
	if data, err = next.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := store.AddPack("next", data); err != nil {
		t.Fatal(err)
	}
	if got, err := cas.ReadTree(store, root); err != nil || len(got) != 3 || got["z/c.md"] != c.ID {
		t.Fatalf("the next tree: %v, %v", got, err)
	}
	if p, err = cas.OpenPack(data); err != nil {
		t.Fatal(err)
	}
	if _, err := cas.ReadTree(p, root); err == nil {
		t.Fatal("the next pack reads on its own: its changed trees went whole, not as deltas")
	}
}

// A sync to a generation the cache already reaches asks the store for
// nothing, whether this process recorded the reach or another process
// sharing P did (its record is read while this process's own reach is
// behind); a reach recorded later by another process never lowers it.
func TestSyncWithinReachFetchesNothing(t *testing.T) {
	dir := t.TempDir()
	head := chunk(t, 8, 100)
	at := func(g uint64) remote.State {
		return remote.State{Manifest: &remote.Manifest{Version: 4, Generation: g, Head: head.ID}}
	}
	a := newCaches(t, dir, nil) // no notebook: a request to the store would panic
	keep(t, a, Key(at(4)), "packs/a", head)
	mustOpen(t, a, Key(at(4))).SetReach(4, head.ID)
	for _, g := range []uint64{3, 4} {
		if c, err := a.Sync(t.Context(), at(g)); err != nil || c.Reach() != 4 {
			t.Fatalf("sync to %d: %v", g, err)
		}
	}

	b := newCaches(t, dir, nil) // another process sharing P, behind
	cb := mustOpen(t, b, Key(at(4)))
	cb.SetReach(6, head.ID)
	if c, err := a.Sync(t.Context(), at(6)); err != nil || c.Reach() != 6 {
		t.Fatalf("the reach another process recorded was not read: %v", err)
	}
	mustOpen(t, newCaches(t, dir, nil), Key(at(4))).forgetReach()
	if c, err := a.Sync(t.Context(), at(5)); err != nil || c.Reach() != 6 {
		t.Fatalf("this process's reach was lowered: %v", err)
	}
}
