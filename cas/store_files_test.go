package cas

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The handles of all stores of a process stay within handleBudget and
// are shared among the stores: a process with many stores must not run
// out of file descriptors, a store opened first must give back what it
// took beyond its share, and a read past the budget still succeeds with
// a handle of its own.
func TestPackFilesShareProcessBudget(t *testing.T) {
	probe := newPackFiles()
	probe.close()
	if probe.maxOpen == 0 {
		t.Skip("no handle is kept on this platform")
	}
	old := handleBudget
	handleBudget = func() int64 { return 30 }
	t.Cleanup(func() { handleBudget = old })
	// Count from zero: stores other tests left open keep their handles.
	savedHandles, savedStores := cachedHandles.Swap(0), liveStores.Swap(0)
	t.Cleanup(func() { cachedHandles.Add(savedHandles); liveStores.Add(savedStores) })
	dir := t.TempDir()
	read := func(pf *packFiles, s, n int) {
		t.Helper()
		for i := range n {
			path := filepath.Join(dir, fmt.Sprintf("%d-%d", s, i))
			if err := os.WriteFile(path, []byte(path), 0o644); err != nil {
				t.Fatal(err)
			}
			h, err := pf.acquire(&storedFile{name: path}, path)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, len(path))
			if _, err := h.f.ReadAt(buf, 0); err != nil || string(buf) != path {
				t.Fatalf("read %s: %q, %v", path, buf, err)
			}
			pf.release(h)
			if k := cachedHandles.Load(); k > 30 {
				t.Fatalf("%d handles kept, budget 30", k)
			}
		}
	}
	first := newPackFiles()
	read(first, 0, 40)
	if n := len(first.open); n != int(min(int64(first.maxOpen), 30)) {
		t.Fatalf("a store alone keeps %d handles", n)
	}
	stores := []*packFiles{first, newPackFiles(), newPackFiles()}
	read(stores[1], 1, 12) // past the budget: read, not kept
	read(first, 2, 1)      // gives back what is beyond its share
	read(stores[1], 3, 12)
	read(stores[2], 4, 12)
	share := 30 / 3
	for s, pf := range stores {
		if n := len(pf.open); n > share || n == 0 {
			t.Errorf("store %d of 3 keeps %d handles: want 1..%d", s, n, share)
		}
	}
	for _, pf := range stores {
		pf.close()
	}
	if n := cachedHandles.Load(); n != 0 {
		t.Errorf("%d handles counted after every store closed", n)
	}
}

// The merged index files are rewritten in place, keeping their inode (so
// the directory's mtime, which vouches for the listing, stays), and a
// shorter rewrite leaves nothing of the longer one behind it.
func TestIndexFileOverwrittenInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), sideIndexName)
	long, short := []byte("a longer index, then"), []byte("short")
	if err := overwriteFile(path, long); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := overwriteFile(path, short); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the file was replaced, not rewritten in place (%v)", err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != string(short) {
		t.Fatalf("after the shorter rewrite: %q, %v", data, err)
	}
}
