package cas_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// smallPack returns a pack of a few objects of every kind, one of them
// zstd-compressed, and the objects in it.
func smallPack(t testing.TB) ([]byte, []cas.Object) {
	t.Helper()
	m := cas.NewObjectSet()
	hello := mustFile(t, m, []byte("hello\n"))
	notes := mustFile(t, m, genText(7, 300)) // inline, compressible
	root, err := cas.WriteTree(m, map[string]cas.ID{"hello.md": hello, "dir/notes.md": notes})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, m, cas.EncodeCommit(cas.Commit{Tree: root, Publication: "p", Message: []byte("m")}))
	w := cas.NewPackWriter()
	var objs []cas.Object
	for _, id := range m.IDs() {
		o, _ := m.Get(id)
		mustPut(t, w, o)
		objs = append(objs, o)
	}
	data, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return data, objs
}

func TestPackRoundTrip(t *testing.T) {
	data, objs := smallPack(t)
	p, err := cas.OpenPack(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != len(objs) {
		t.Fatalf("Len() = %d, want %d", p.Len(), len(objs))
	}
	for _, want := range objs {
		got, err := p.Get(want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != want.ID || got.Kind != want.Kind || !bytes.Equal(got.Body, want.Body) {
			t.Fatalf("Get returned a different %v object", want.Kind)
		}
	}
	ids := p.IDs()
	if !slices.IsSortedFunc(ids, func(a, b cas.ID) int { return bytes.Compare(a[:], b[:]) }) || len(ids) != len(objs) {
		t.Fatalf("IDs() not the sorted set of %d IDs", len(objs))
	}
	if err := p.Verify(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(cas.Sum([]byte("absent"))); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("Get(absent) error = %v, want ErrNotFound", err)
	}
}

// A returned body is the caller's: changing it does not change the pack.
func TestPackGetReturnsACopy(t *testing.T) {
	data, objs := smallPack(t)
	p, _ := cas.OpenPack(data)
	o, _ := p.Get(objs[0].ID)
	for i := range o.Body {
		o.Body[i] ^= 0xff
	}
	if _, err := p.Get(objs[0].ID); err != nil {
		t.Fatalf("after modifying a returned body: %v", err)
	}
}

func TestPackWriterPutsOnce(t *testing.T) {
	w := cas.NewPackWriter()
	o := mustChunk(t, []byte("same"))
	for range 3 {
		mustPut(t, w, o)
	}
	if w.Len() != 1 || !w.Has(o.ID) {
		t.Fatalf("Len() = %d after putting one object three times", w.Len())
	}
	data, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := w.Finish()
	if !bytes.Equal(data, again) {
		t.Fatal("a second Finish returned different bytes")
	}
	if err := w.Put(mustChunk(t, []byte("late"))); err == nil {
		t.Fatal("Put after Finish succeeded")
	}
}

func TestPackWriterRefusesBadObjects(t *testing.T) {
	good := mustChunk(t, []byte("abc"))
	cases := map[string]cas.Object{
		"wrong ID":       {ID: cas.Sum([]byte("x")), Kind: good.Kind, Body: good.Body},
		"wrong kind":     {ID: good.ID, Kind: cas.KindFile, Body: good.Body},
		"empty body":     {ID: cas.Sum(nil), Kind: cas.KindChunk},
		"bad structure":  {ID: cas.Sum([]byte{3, 9}), Kind: cas.KindTree, Body: []byte{3, 9}},
		"unknown kind 9": {ID: cas.Sum([]byte{9, 1}), Kind: 9, Body: []byte{9, 1}},
	}
	for name, o := range cases {
		w := cas.NewPackWriter()
		if err := w.Put(o); !errors.Is(err, cas.ErrInvalidObject) {
			t.Errorf("%s: Put error = %v, want ErrInvalidObject", name, err)
		}
		if w.Len() != 0 {
			t.Errorf("%s: refused object was kept", name)
		}
	}
}

func TestEmptyPackIsNeverWritten(t *testing.T) {
	if _, err := cas.NewPackWriter().Finish(); !errors.Is(err, cas.ErrEmptyPack) {
		t.Fatalf("Finish() error = %v, want ErrEmptyPack", err)
	}
}

// Compressible bodies are stored with zstd, incompressible ones raw; both
// read back identically (TestPackRoundTrip) and the pack is smaller than
// the bodies it holds when they compress.
func TestPackCompressesWherePays(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content []byte
		smaller bool
	}{
		{"text", genText(11, 200<<10), true},
		{"random", genBytes(12, 200<<10), false},
	} {
		w := cas.NewPackWriter()
		mustFile(t, w, tc.content)
		data, _ := w.Finish()
		if got := len(data) < len(tc.content)/2; got != tc.smaller {
			t.Errorf("%s: pack of %d bytes for %d bytes of content", tc.name, len(data), len(tc.content))
		}
		if !tc.smaller && len(data) > len(tc.content)+len(tc.content)/20 {
			t.Errorf("%s: incompressible content grew from %d to %d bytes", tc.name, len(tc.content), len(data))
		}
	}
}

func TestPackWriterHasAfterFinish(t *testing.T) {
	w := cas.NewPackWriter()
	o := mustChunk(t, []byte("kept"))
	mustPut(t, w, o)
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if !w.Has(o.ID) || w.Len() != 1 {
		t.Fatal("a finished PackWriter forgot what it holds")
	}
}
