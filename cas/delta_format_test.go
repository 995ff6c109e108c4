package cas_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

var update = flag.Bool("update", false, "create the testdata files that are missing (an existing one is never rewritten)")

// deltaFixture is the content of testdata/v2/delta.pack (docs/format.md
// 4.8): the tree {todo.md: file hello} of 2.5 and a tree of eight notes
// stored whole, then two trees stored as deltas, the second against the
// first (a chain of two). The notes' file objects are not in the pack
// (a pack need not hold a closure); each has distinct content, so the
// tree's IDs do not compress and it is stored raw. recs are the same
// records written down with the documentation-only mirror, edits
// included.
func deltaFixture(t *testing.T) (objs []cas.Object, recs []docRecord) {
	t.Helper()
	m := cas.NewObjectSet()
	get := func(id cas.ID) cas.Object {
		o, err := m.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	hello := mustFile(t, m, []byte("hello\n"))
	note := func(i int) cas.ID { return mustFile(t, m, []byte(fmt.Sprintf("note %d\n", i))) }
	sub := get(mustTree(t, m, map[string]cas.ID{"todo.md": hello}))
	files := map[string]cas.ID{}
	for i := 1; i <= 8; i++ {
		files[fmt.Sprintf("%d.md", i)] = note(i)
	}
	base := get(mustTree(t, m, files))
	delete(files, "2.md")
	files["5.md"] = note(50)
	files["9.md"] = note(9)
	d1 := get(mustTree(t, m, files))
	files["sub/todo.md"] = hello
	d2 := get(mustTree(t, m, files))
	objs = []cas.Object{sub, base, d1, d2}
	recs = []docRecord{{obj: sub}, {obj: base},
		{obj: d1, delta: docDelta(t, base.ID, []docEdit{
			{op: 0, name: "2.md"},
			{op: 2, name: "5.md", id: note(50)},
			{op: 2, name: "9.md", id: note(9)},
		})},
		{obj: d2, delta: docDelta(t, d1.ID, []docEdit{
			{op: 3, name: "sub", id: sub.ID},
		})},
	}
	return objs, recs
}

func mustTree(t testing.TB, sink cas.Sink, files map[string]cas.ID) cas.ID {
	t.Helper()
	id, err := cas.WriteTree(sink, files)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// writeDeltaFixture packs the fixture's objects with the package's writer:
// the first two with Put, the last two with PutDelta against the tree
// before each.
func writeDeltaFixture(t *testing.T, objs []cas.Object) []byte {
	t.Helper()
	w := cas.NewPackWriter()
	for i, o := range objs {
		var err error
		if i < 2 {
			err = w.Put(o)
		} else {
			err = w.PutDelta(o, objs[i-1], 0)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	data, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The pinned version-2 pack, the package's writer and the mirror encoder
// agree byte for byte, and the pack reads back every object.
func TestDeltaPackLayoutMatchesDocumentation(t *testing.T) {
	objs, recs := deltaFixture(t)
	got := writeDeltaFixture(t, objs)
	if doc := docEncodePack(t, recs); !bytes.Equal(got, doc) {
		t.Fatalf("PackWriter output (%d bytes) differs from the documented layout (%d bytes)", len(got), len(doc))
	}
	path := filepath.Join("testdata", "v2", "delta.pack")
	if *update {
		if err := writeOnce(path, got); err != nil {
			t.Fatal(err)
		}
	}
	pinned, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, pinned) {
		t.Fatalf("PackWriter output differs from %s: a format break", path)
	}
	const wantSum = "422f1d32b00625e179a7d7881548e45379c32d639d38b517b0e022ab1de0ad14"
	if s := cas.Sum(pinned).String(); s != wantSum {
		t.Fatalf("%s BLAKE3 %s, want %s", path, s, wantSum)
	}
	p, err := cas.OpenPack(pinned)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version() != cas.PackVersionDeltas || len(p.Bases()) != 0 {
		t.Fatalf("version %d, external bases %v: want version 2 holding its own bases", p.Version(), p.Bases())
	}
	if err := p.Verify(); err != nil {
		t.Fatal(err)
	}
	for i, want := range objs {
		o, depth, err := cas.GetDepth(p, want.ID)
		if err != nil || !bytes.Equal(o.Body, want.Body) {
			t.Fatalf("object %d: %v", i, err)
		}
		if wantDepth := max(i-1, 0); depth != wantDepth {
			t.Fatalf("object %d rebuilt through %d deltas, want %d", i, depth, wantDepth)
		}
	}
}

// writeOnce creates path with data; an existing file is never rewritten.
func writeOnce(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
