package cas_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

func TestTreeRoundTrip(t *testing.T) {
	m := cas.NewObjectSet()
	files := map[string]cas.ID{}
	for i := range 300 {
		path := fmt.Sprintf("d%d/sub%d/note-%d.md", i%7, i%3, i)
		if i%10 == 0 {
			path = fmt.Sprintf("top-%d.md", i)
		}
		files[path] = mustFile(t, m, []byte(path))
	}
	files["ünïcode/ß.md"] = mustFile(t, m, []byte("x"))
	root, err := cas.WriteTree(m, files)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cas.ReadTree(m, root)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, files) {
		t.Fatalf("ReadTree returned %d paths, want the %d written", len(got), len(files))
	}
	// The same files give the same root, whatever the map's order.
	again, _ := cas.WriteTree(nil, maps.Clone(files))
	if again != root {
		t.Fatal("same files, different root tree ID")
	}
}

func TestEmptyTree(t *testing.T) {
	m := cas.NewObjectSet()
	root, err := cas.WriteTree(m, map[string]cas.ID{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := cas.ReadTree(m, root)
	if err != nil || len(got) != 0 {
		t.Fatalf("ReadTree(empty) = %v, %v", got, err)
	}
}

func TestWriteTreeRefusesBadPaths(t *testing.T) {
	id := cas.Sum([]byte("file"))
	for _, files := range []map[string]cas.ID{
		{"": id},
		{"/abs": id},
		{"trailing/": id},
		{"a//b": id},
		{"a/./b": id},
		{"a/../b": id},
		{"nul\x00": id},
		{"a": id, "a/b": id},
		{"zero": {}},
	} {
		if _, err := cas.WriteTree(nil, files); !errors.Is(err, cas.ErrInvalidPath) {
			t.Errorf("WriteTree(%q) error = %v, want ErrInvalidPath", slices.Collect(maps.Keys(files)), err)
		}
	}
}

// Trees are sorted by name bytes, and the decoder accepts nothing else.
func TestTreeDecoderRefusesDisorder(t *testing.T) {
	a, b := cas.Sum([]byte("a")), cas.Sum([]byte("b"))
	for name, entries := range map[string][]cas.TreeEntry{
		"unsorted":   {{Name: "b", Kind: cas.KindFile, ID: a}, {Name: "a", Kind: cas.KindFile, ID: b}},
		"duplicate":  {{Name: "a", Kind: cas.KindFile, ID: a}, {Name: "a", Kind: cas.KindTree, ID: b}},
		"chunk kind": {{Name: "a", Kind: cas.KindChunk, ID: a}},
		"zero ID":    {{Name: "a", Kind: cas.KindFile}},
		"dot":        {{Name: ".", Kind: cas.KindTree, ID: a}},
		"slash":      {{Name: "a/b", Kind: cas.KindFile, ID: a}},
	} {
		if _, err := cas.EncodeTree(entries); !errors.Is(err, cas.ErrInvalidObject) {
			t.Errorf("%s: EncodeTree error = %v, want ErrInvalidObject", name, err)
		}
	}
	// Byte order, not Unicode or case order: "B" < "a" < "é".
	ok := []cas.TreeEntry{{Name: "B", Kind: cas.KindFile, ID: a}, {Name: "a", Kind: cas.KindFile, ID: b}, {Name: "é", Kind: cas.KindTree, ID: a}}
	if _, err := cas.EncodeTree(ok); err != nil {
		t.Fatalf("byte-sorted entries refused: %v", err)
	}
}

// An empty subtree cannot come from WriteTree (empty directories are not
// state), so reading one is corruption.
func TestReadTreeRefusesEmptySubtree(t *testing.T) {
	m := cas.NewObjectSet()
	empty, _ := cas.EncodeTree(nil)
	mustPut(t, m, empty)
	root, _ := cas.EncodeTree([]cas.TreeEntry{{Name: "dir", Kind: cas.KindTree, ID: empty.ID}})
	mustPut(t, m, root)
	if _, err := cas.ReadTree(m, root.ID); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("ReadTree error = %v, want ErrCorrupt", err)
	}
}

func TestReadTreeMissingSubtree(t *testing.T) {
	m := cas.NewObjectSet()
	root, err := cas.WriteTree(m, map[string]cas.ID{"a/b/c.md": mustFile(t, m, []byte("c"))})
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := cas.WriteTree(nil, map[string]cas.ID{"b/c.md": mustFile(t, nil, []byte("c"))})
	m.Delete(sub)
	if _, err := cas.ReadTree(m, root); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("ReadTree error = %v, want ErrNotFound", err)
	}
}
