package cas_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// dirFiles returns n files named like a directory of notes, each with
// distinct content put into m, as a flat map for WriteTree.
func dirFiles(t testing.TB, m *cas.ObjectSet, n, seed int) map[string]cas.ID {
	t.Helper()
	files := make(map[string]cas.ID, n)
	for i := range n {
		files[fmt.Sprintf("note-%05d.md", i)] = mustFile(t, m, []byte(fmt.Sprintf("note %d of %d\n", i, seed)))
	}
	return files
}

func treeOf(t testing.TB, m *cas.ObjectSet, files map[string]cas.ID) cas.Object {
	t.Helper()
	o, err := m.Get(mustTree(t, m, files))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func finish(t testing.TB, w *cas.PackWriter) []byte {
	t.Helper()
	data, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func openPack(t testing.TB, data []byte) *cas.Pack {
	t.Helper()
	p, err := cas.OpenPack(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// parentAndChild returns a directory tree of 100 notes and the same tree
// after a one-line commit changed one note, both in m.
func parentAndChild(t testing.TB, m *cas.ObjectSet) (parent, child cas.Object) {
	t.Helper()
	files := dirFiles(t, m, 100, 1)
	parent = treeOf(t, m, files)
	files["note-00042.md"] = mustFile(t, m, []byte("note 42, one line more\n"))
	return parent, treeOf(t, m, files)
}

// An increment's pack names its parent's directory tree as the base of
// the new one: it stores one entry instead of a hundred, and a store that
// holds the parent reads the new tree back, byte for byte, after a reopen.
func TestDeltaAgainstTheParentTreeRoundTrips(t *testing.T) {
	m := cas.NewObjectSet()
	parent, child := parentAndChild(t, m)
	dir := t.TempDir()
	s := openStore(t, dir)
	w := cas.NewPackWriter()
	mustPut(t, w, parent)
	if err := s.AddPack("1.pack", finish(t, w)); err != nil {
		t.Fatal(err)
	}

	_, depth, err := cas.GetDepth(s, parent.ID)
	if err != nil || depth != 0 {
		t.Fatalf("parent tree: depth %d, %v", depth, err)
	}
	w = cas.NewPackWriter()
	if err := w.PutDelta(child, parent, depth); err != nil {
		t.Fatal(err)
	}
	delta := finish(t, w)
	w = cas.NewPackWriter()
	mustPut(t, w, child)
	whole := finish(t, w)
	t.Logf("increment pack: %d bytes with the delta, %d stored whole", len(delta), len(whole))
	if len(delta)*10 > len(whole) {
		t.Fatalf("increment pack of %d bytes with the delta, %d whole: want a tenth at most", len(delta), len(whole))
	}
	p := openPack(t, delta)
	if p.Version() != cas.PackVersionDeltas || !slices.Equal(p.Bases(), []cas.ID{parent.ID}) {
		t.Fatalf("version %d, bases %v: want version 2 naming the parent tree", p.Version(), p.Bases())
	}
	if err := s.AddPack("2.pack", delta); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openStore(t, dir)
	o, depth, err := cas.GetDepth(s, child.ID)
	if err != nil || !bytes.Equal(o.Body, child.Body) || depth != 1 {
		t.Fatalf("child tree from a reopened store: depth %d, %v", depth, err)
	}
	if err := s.VerifyPack("2.pack"); err != nil {
		t.Fatal(err)
	}
	files, err := cas.ReadTree(s, child.ID)
	if err != nil || len(files) != 100 {
		t.Fatalf("ReadTree through the delta: %d files, %v", len(files), err)
	}
}

// A pack whose base the reader does not hold says so, and names it:
// it is not damage, and the store does not keep a pack it cannot verify.
// With the base at hand (in the store, or in the same AddPacks) it reads.
func TestDeltaMissingBaseIsReported(t *testing.T) {
	m := cas.NewObjectSet()
	parent, child := parentAndChild(t, m)
	w := cas.NewPackWriter()
	mustPut(t, w, parent)
	basePack := finish(t, w)
	w = cas.NewPackWriter()
	if err := w.PutDelta(child, parent, 0); err != nil {
		t.Fatal(err)
	}
	deltaPack := finish(t, w)

	p := openPack(t, deltaPack)
	for what, err := range map[string]error{"Get": getErr(p, child.ID), "Verify": p.Verify()} {
		if !errors.Is(err, cas.ErrMissingBase) || errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("%s without the base: error = %v, want ErrMissingBase and not ErrCorrupt", what, err)
		}
	}
	if o, err := p.WithBases(m).Get(child.ID); err != nil || !bytes.Equal(o.Body, child.Body) {
		t.Fatalf("Get with the base supplied: %v", err)
	}

	s := openStore(t, t.TempDir())
	if err := s.AddPack("2.pack", deltaPack); !errors.Is(err, cas.ErrMissingBase) {
		t.Fatalf("AddPack without the base: error = %v, want ErrMissingBase", err)
	}
	if s.HasPack("2.pack") {
		t.Fatal("the store kept a pack it could not verify")
	}
	if err := s.AddPacks([]cas.NamedPack{{Name: "2.pack", Data: deltaPack}, {Name: "1.pack", Data: basePack}}); err != nil {
		t.Fatalf("AddPacks with the base in the same call: %v", err)
	}
	if o, err := s.Get(child.ID); err != nil || !bytes.Equal(o.Body, child.Body) {
		t.Fatalf("Get after AddPacks: %v", err)
	}

	// Removing the base's file (with its bundle) leaves the delta unreadable,
	// as a missing base again.
	s2 := openStore(t, t.TempDir())
	if err := s2.AddPack("1.pack", basePack); err != nil {
		t.Fatal(err)
	}
	if err := s2.AddPack("2.pack", deltaPack); err != nil {
		t.Fatal(err)
	}
	if err := s2.RemovePack("1.pack"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get(child.ID); !errors.Is(err, cas.ErrMissingBase) {
		t.Fatalf("Get after the base's pack was removed: error = %v, want ErrMissingBase", err)
	}
}

func getErr(src cas.Source, id cas.ID) error {
	_, err := src.Get(id)
	return err
}

// Behind a valid pack checksum, every changed bit of a delta's stored
// bytes is caught: a changed base ID finds no base, any other change
// rebuilds a tree that breaks a rule or does not hash to the ID. The same
// damage in a pack already in the local store (read without its
// checksum) is caught on Get.
func TestDeltaCorruptionIsDetected(t *testing.T) {
	m := cas.NewObjectSet()
	parent, child := parentAndChild(t, m)
	w := cas.NewPackWriter()
	mustPut(t, w, parent)
	if err := w.PutDelta(child, parent, 0); err != nil {
		t.Fatal(err)
	}
	data := finish(t, w)
	off := recordOffset(t, data, child.ID)
	stored := int(binary.LittleEndian.Uint32(data[off+38:]))
	for i := off + 34; i < off+42+stored; i++ { // body length, stored length, stored bytes
		for bit := range 8 {
			bad := bytes.Clone(data)
			bad[i] ^= 1 << bit
			p, err := cas.OpenPack(reseal(bad))
			if err != nil {
				if !errors.Is(err, cas.ErrCorrupt) {
					t.Fatalf("byte %d bit %d: OpenPack error = %v", i-off, bit, err)
				}
				continue // a changed stored length no longer tiles
			}
			err = getErr(p, child.ID)
			want := cas.ErrCorrupt
			if i >= off+42 && i < off+42+32 {
				want = cas.ErrMissingBase
			}
			if !errors.Is(err, want) {
				t.Fatalf("record byte %d bit %d: Get error = %v, want %v", i-off, bit, err, want)
			}
			if err := p.Verify(); !errors.Is(err, want) {
				t.Fatalf("record byte %d bit %d: Verify error = %v, want %v", i-off, bit, err, want)
			}
		}
	}

	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.AddPack("1.pack", data); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := filepath.Join(dir, "1.pack")
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	onDisk[off+42+stored-1] ^= 1 // the last byte of the last edit's ID
	if err := os.WriteFile(path, onDisk, 0o600); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir)
	if _, err := s.Get(child.ID); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("damaged delta in the store: Get error = %v, want ErrCorrupt", err)
	}
}

// A delta has one encoding given its base: edits that change nothing,
// name an absent entry, come out of order, or rebuild another length are
// refused, as is a delta record in a version-1 pack.
func TestDeltaRulesAreChecked(t *testing.T) {
	m := cas.NewObjectSet()
	parent, child := parentAndChild(t, m)
	changed := mustFile(t, m, []byte("note 42, one line more\n"))
	old := mustFile(t, m, []byte("note 42 of 1\n"))
	good := []docEdit{{op: 2, name: "note-00042.md", id: changed}}
	cases := map[string]struct {
		edits   []docEdit
		mutate  func(delta []byte) []byte
		version uint32
		bodyLen uint32 // the record's body length, if not the tree's
	}{
		"valid":              {edits: good},
		"in a version-1":     {edits: good, version: 1},
		"no edit":            {edits: nil},
		"set to the same":    {edits: []docEdit{{op: 2, name: "note-00042.md", id: changed}, {op: 2, name: "note-00043.md", id: mustFile(t, m, []byte("note 43 of 1\n"))}}},
		"remove absent":      {edits: []docEdit{{op: 2, name: "note-00042.md", id: changed}, {op: 0, name: "zz.md"}}},
		"names out of order": {edits: []docEdit{{op: 2, name: "note-00042.md", id: changed}, {op: 2, name: "note-00041.md", id: old}}},
		"name twice":         {edits: []docEdit{{op: 0, name: "note-00042.md"}, {op: 2, name: "note-00042.md", id: changed}}},
		"unknown op":         {edits: []docEdit{{op: 4, name: "note-00042.md", id: changed}}},
		"zero ID":            {edits: []docEdit{{op: 2, name: "note-00042.md"}}},
		"name with a slash":  {edits: []docEdit{{op: 2, name: "a/b", id: changed}}},
		"trailing byte":      {edits: good, mutate: func(d []byte) []byte { return append(d, 0) }},
		"count too large":    {edits: good, mutate: func(d []byte) []byte { binary.LittleEndian.PutUint32(d[32:], 2); return d }},
		"base is itself":     {edits: good, mutate: func(d []byte) []byte { copy(d, child.ID[:]); return d }},
		"base is zero":       {edits: good, mutate: func(d []byte) []byte { clear(d[:32]); return d }},
		"body too short":     {edits: good, bodyLen: 3},
		"body one short":     {edits: good, bodyLen: uint32(len(child.Body) - 1)},
		"body one long":      {edits: good, bodyLen: uint32(len(child.Body) + 1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			delta := docDelta(t, parent.ID, tc.edits)
			if tc.mutate != nil {
				delta = tc.mutate(delta)
			}
			data := docEncodePack(t, []docRecord{{obj: parent}, {obj: child, delta: delta}})
			if tc.version != 0 {
				binary.LittleEndian.PutUint32(data[8:], tc.version)
				data = reseal(data)
			}
			if tc.bodyLen != 0 {
				binary.LittleEndian.PutUint32(data[recordOffset(t, data, child.ID)+34:], tc.bodyLen)
				data = reseal(data)
			}
			p := openPack(t, data)
			err := getErr(p, child.ID)
			if name == "valid" {
				if err != nil || p.Verify() != nil {
					t.Fatalf("valid delta: %v", err)
				}
				return
			}
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("Get error = %v, want ErrCorrupt", err)
			}
			if err := p.Verify(); !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("Verify error = %v, want ErrCorrupt", err)
			}
		})
	}
}

// A chain of deltas is read up to MaxDeltaDepth deep and refused beyond,
// in a store as in one pack; a cycle of bases is refused the same way,
// and the writer never writes one.
func TestDeltaChainsAreBounded(t *testing.T) {
	m := cas.NewObjectSet()
	files := dirFiles(t, m, 20, 2)
	prev := treeOf(t, m, files)
	s := openStore(t, t.TempDir())
	w := cas.NewPackWriter()
	mustPut(t, w, prev)
	if err := s.AddPack("0.pack", finish(t, w)); err != nil {
		t.Fatal(err)
	}
	var tip cas.Object
	for k := 1; k <= cas.MaxDeltaDepth+1; k++ {
		files[fmt.Sprintf("note-%05d.md", k%20)] = mustFile(t, m, []byte(fmt.Sprintf("version %d\n", k)))
		tip = treeOf(t, m, files)
		w := cas.NewPackWriter()
		if err := w.PutDelta(tip, prev, 0); err != nil { // depth 0: make the writer chain on
			t.Fatal(err)
		}
		err := s.AddPack(fmt.Sprintf("%d.pack", k), finish(t, w))
		if k <= cas.MaxDeltaDepth && err != nil {
			t.Fatalf("chain of %d deltas refused: %v", k, err)
		}
		if k > cas.MaxDeltaDepth && !errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("chain of %d deltas: AddPack error = %v, want ErrCorrupt", k, err)
		}
		prev = tip
	}
	if _, depth, err := cas.GetDepth(s, prev.ID); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("tip beyond the bound: depth %d, %v, want not stored", depth, err)
	}

	// Two trees, each stored as its change from the other.
	a, b := treeOf(t, m, files), cas.Object{}
	files["extra.md"] = mustFile(t, m, []byte("extra\n"))
	b = treeOf(t, m, files)
	cycle := docEncodePack(t, []docRecord{
		{obj: a, delta: docDelta(t, b.ID, []docEdit{{op: 0, name: "extra.md"}})},
		{obj: b, delta: docDelta(t, a.ID, []docEdit{{op: 2, name: "extra.md", id: files["extra.md"]}})},
	})
	if err := getErr(openPack(t, cycle), a.ID); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("cycle of bases: Get error = %v, want ErrCorrupt", err)
	}
	w = cas.NewPackWriter()
	if err := w.PutDelta(a, b, 0); err != nil {
		t.Fatal(err)
	}
	if err := w.PutDelta(b, a, 0); err != nil {
		t.Fatal(err)
	}
	p := openPack(t, finish(t, w))
	if err := p.Verify(); err != nil {
		t.Fatalf("the writer's pack of two trees put against each other: %v", err)
	}
}

// The writer stores a tree whole when a delta would not help it: too
// deep a base, a delta no smaller than the tree, or an object that is not
// a tree; a pack with no delta record stays version 1.
func TestDeltaWriterStoresWholeWhenItMust(t *testing.T) {
	m := cas.NewObjectSet()
	parent, child := parentAndChild(t, m)
	small := treeOf(t, m, map[string]cas.ID{"a.md": mustFile(t, m, []byte("a\n"))})
	smaller := treeOf(t, m, map[string]cas.ID{"b.md": mustFile(t, m, []byte("b\n"))})
	file, _ := m.Get(mustFile(t, m, []byte("a file\n")))
	for name, put := range map[string]func(w *cas.PackWriter) error{
		"base too deep":    func(w *cas.PackWriter) error { return w.PutDelta(child, parent, cas.WriteDeltaDepth) },
		"delta no smaller": func(w *cas.PackWriter) error { return w.PutDelta(smaller, small, 0) },
		"not a tree":       func(w *cas.PackWriter) error { return w.PutDelta(file, parent, 0) },
	} {
		w := cas.NewPackWriter()
		if err := put(w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := openPack(t, finish(t, w))
		if p.Version() != cas.PackVersion || p.Bases() != nil || p.Verify() != nil {
			t.Fatalf("%s: version %d, bases %v: want a version-1 pack that stands alone", name, p.Version(), p.Bases())
		}
	}
	w := cas.NewPackWriter()
	if err := w.PutDelta(child, file, 0); !errors.Is(err, cas.ErrInvalidObject) {
		t.Fatalf("a file as base: error = %v, want ErrInvalidObject", err)
	}
}
