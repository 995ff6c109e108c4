package cas_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Two packs that are each sound can hold two trees each as the other's
// change: a proposal's pack stores its tree a as a delta from its parent
// g, and a fold's pack stores g as a delta from a. The store indexes one
// record per object, in the order it meets the files, so it may pick
// exactly those two (seen with six CLI writers on a version-4 store, a
// commit refused as CORRUPT_PACK or the cache dropped). Every tree is
// still read, from its other records, and a pack whose delta needs one is
// added; only with no record that leads to a whole tree is it refused.
func TestDeltaRecordsThatAreEachOthersBasesReadThroughAnother(t *testing.T) {
	m := cas.NewObjectSet()
	files := dirFiles(t, m, 20, 3)
	g := treeOf(t, m, files)
	files["extra.md"] = mustFile(t, m, []byte("extra\n"))
	a := treeOf(t, m, files)
	files["more.md"] = mustFile(t, m, []byte("more\n"))
	h := treeOf(t, m, files)

	dir := t.TempDir()
	s := openStore(t, dir)
	add := func(name string, put func(w *cas.PackWriter) error) {
		t.Helper()
		w := cas.NewPackWriter()
		if err := put(w); err != nil {
			t.Fatal(err)
		}
		if err := s.AddPack(name, finish(t, w)); err != nil {
			t.Fatalf("add %s: %v", name, err)
		}
	}
	// Added in this order every record is readable; a later open meets
	// the files by name, a.pack first: g's record there and a's in b.pack
	// are each other's bases.
	add("c.pack", func(w *cas.PackWriter) error { return w.Put(g) })
	add("b.pack", func(w *cas.PackWriter) error { return w.PutDelta(a, g, 0) })
	add("a.pack", func(w *cas.PackWriter) error { return w.PutDelta(g, a, 1) })
	s.Close()
	os.Remove(filepath.Join(dir, ".index")) // an index cache would keep the first order

	s = openStore(t, dir)
	for _, want := range []cas.Object{a, g} {
		if o, err := s.Get(want.ID); err != nil || !bytes.Equal(o.Body, want.Body) {
			t.Fatalf("tree %v: %v", want.ID, err)
		}
	}
	add("d.pack", func(w *cas.PackWriter) error { return w.PutDelta(h, a, 1) })
	if o, err := s.Get(h.ID); err != nil || !bytes.Equal(o.Body, h.Body) {
		t.Fatalf("tree of the pack added on top: %v", err)
	}

	// Without the whole tree the two records cannot be read: refused as
	// corrupt, not a loop.
	if err := s.RemovePack("c.pack"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Remove(filepath.Join(dir, ".index"))
	s = openStore(t, dir)
	if _, err := s.Get(a.ID); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("a cycle and nothing else: %v, want ErrCorrupt", err)
	}
}
