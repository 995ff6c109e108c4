package cas_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// A store keeps the trees it rebuilt through deltas, so a commit that
// reads one tree several times walks its chain once. What a reader sees
// must not change: each read reports the same depth (a writer decides
// from it whether to store its next tree whole), hands out a body of its
// own (changing it changes no later read), and a tree whose pack was
// removed is not found any more, though it was read before.
func TestStoreReadsOfAKeptTreeAreUnchanged(t *testing.T) {
	m := cas.NewMemory()
	files := dirFiles(t, m, 20, 3)
	prev := treeOf(t, m, files)
	s := openStore(t, t.TempDir())
	w := cas.NewPackWriter()
	mustPut(t, w, prev)
	if err := s.AddPack("0.pack", finish(t, w)); err != nil {
		t.Fatal(err)
	}
	const chain = 5
	for k := 1; k <= chain; k++ {
		files[fmt.Sprintf("note-%05d.md", k)] = mustFile(t, m, []byte(fmt.Sprintf("version %d\n", k)))
		tip := treeOf(t, m, files)
		w := cas.NewPackWriter()
		if err := w.PutDelta(tip, prev, k-1); err != nil {
			t.Fatal(err)
		}
		if err := s.AddPack(fmt.Sprintf("%d.pack", k), finish(t, w)); err != nil {
			t.Fatal(err)
		}
		prev = tip
	}
	for read := range 3 {
		o, depth, err := cas.GetDepth(s, prev.ID)
		if err != nil {
			t.Fatalf("read %d: %v", read, err)
		}
		if depth != chain || !bytes.Equal(o.Body, prev.Body) {
			t.Fatalf("read %d: depth %d, body equal %v; want depth %d and the tree", read, depth, bytes.Equal(o.Body, prev.Body), chain)
		}
		clear(o.Body) // the reader's own: the next read must not see this
	}
	if err := s.RemovePack(fmt.Sprintf("%d.pack", chain)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(prev.ID); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("tree of a removed pack: Get error = %v, want ErrNotFound", err)
	}
}
