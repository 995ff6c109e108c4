package cas

import (
	"errors"
	"testing"
	"time"
)

// shareBomb builds depth levels of trees whose two entries name the same
// subtree: depth+1 objects that describe 2^depth paths.
func shareBomb(t *testing.T, m *ObjectSet, depth int) (root ID) {
	t.Helper()
	leaf, err := WriteFile(m, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	id, kind := leaf, KindFile
	for range depth {
		o, err := EncodeTree([]TreeEntry{{Name: "a", Kind: kind, ID: id}, {Name: "b", Kind: kind, ID: id}})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Put(o); err != nil {
			t.Fatal(err)
		}
		id, kind = o.ID, KindTree
	}
	return id
}

// A small tree describing more paths than the limit is refused instead of
// exhausting memory.
func TestReadTreeRefusesTooManyPaths(t *testing.T) {
	defer func(n int) { treeFileLimit = n }(treeFileLimit)
	treeFileLimit = 1000
	m := NewObjectSet()
	if _, err := ReadTree(m, shareBomb(t, m, 9)); err != nil {
		t.Fatalf("512 paths under a limit of 1000: %v", err)
	}
	if _, err := ReadTree(m, shareBomb(t, m, 10)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("1024 paths over a limit of 1000: error = %v, want ErrCorrupt", err)
	}
}

// CheckClosure reads each shared object once, so 2^60 paths cost 61 reads.
func TestCheckClosureReadsSharedObjectsOnce(t *testing.T) {
	m := NewObjectSet()
	root := shareBomb(t, m, 60)
	c := EncodeCommit(Commit{Tree: root, Time: time.Unix(0, 0)})
	if err := m.Put(c); err != nil {
		t.Fatal(err)
	}
	counting := &countingSource{src: m}
	if err := CheckClosure(counting, c.ID); err != nil {
		t.Fatal(err)
	}
	if counting.gets > 62 {
		t.Fatalf("%d reads for 62 distinct objects", counting.gets)
	}
}

type countingSource struct {
	src  Source
	gets int
}

func (c *countingSource) Get(id ID) (Object, error) {
	c.gets++
	return c.src.Get(id)
}
