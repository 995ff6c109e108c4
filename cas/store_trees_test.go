package cas_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	m := cas.NewObjectSet()
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

// A reader checks only the end of a delta chain against its ID, and reads
// the chain again link by link when that check fails: a damaged record in
// the middle is still refused as corrupt, and named.
func TestStoreNamesTheDamagedLinkOfAChain(t *testing.T) {
	m := cas.NewObjectSet()
	files := dirFiles(t, m, 20, 4)
	base := treeOf(t, m, files)
	dir := t.TempDir()
	s := openStore(t, dir)
	w := cas.NewPackWriter()
	mustPut(t, w, base)
	if err := s.AddPack("0.pack", finish(t, w)); err != nil {
		t.Fatal(err)
	}
	prev, damaged := base, cas.ID{}
	for k := 1; k <= 3; k++ {
		id := mustFile(t, m, []byte(fmt.Sprintf("link %d\n", k)))
		if k == 2 {
			damaged = id
		}
		files[fmt.Sprintf("note-%05d.md", k)] = id
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
	// The second link's delta sets an entry to damaged: change that ID in
	// place, so the link rebuilds a well-formed tree that is not its own.
	path := filepath.Join(dir, "2.pack")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, damaged[:])
	if at < 0 {
		t.Fatal("the delta's edit is not in its pack")
	}
	data[at+31] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = openStore(t, dir).Get(prev.ID)
	if !errors.Is(err, cas.ErrCorrupt) || !strings.Contains(err.Error(), `"2.pack"`) {
		t.Fatalf("chain through a damaged link: Get error = %v, want ErrCorrupt naming 2.pack", err)
	}
}
