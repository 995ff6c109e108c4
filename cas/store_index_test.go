package cas_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// mergedStore makes a store of n one-file packs, reopens it (which records
// the merged index) and returns its directory, pack names and file IDs.
func mergedStore(t *testing.T, n int) (string, []string, []cas.ID) {
	t.Helper()
	dir := t.TempDir()
	s := openStore(t, dir)
	var names []string
	var ids []cas.ID
	for i := range n {
		data, id := packOf(t, fmt.Appendf(nil, "pack %d\n", i))
		name := fmt.Sprintf("%02d.pack", i)
		if err := s.AddPack(name, data); err != nil {
			t.Fatal(err)
		}
		names, ids = append(names, name), append(ids, id)
	}
	openStore(t, dir) // loads every pack on its own and records the index
	if _, err := os.Stat(filepath.Join(dir, ".index")); err != nil {
		t.Fatalf("no merged index after opening a store of %d packs: %v", n, err)
	}
	return dir, names, ids
}

func readAll(t *testing.T, s *cas.Store, ids []cas.ID) {
	t.Helper()
	for i, id := range ids {
		if _, err := cas.ReadFile(s, id); err != nil {
			t.Fatalf("object of pack %d: %v", i, err)
		}
	}
}

// A reopened store finds objects through the merged index without reading
// the packs' own indexes, and still verifies every object it reads.
func TestStoreMergedIndexServesReopenedStore(t *testing.T) {
	dir, names, ids := mergedStore(t, 12)
	// Damage the ID in one pack's own index (the last 48 bytes are the
	// trailer, the 44 before them its only index entry) and one record.
	indexed := filepath.Join(dir, names[3])
	disk, _ := os.ReadFile(indexed)
	disk[len(disk)-48-44] ^= 0xff
	if err := os.WriteFile(indexed, disk, 0o600); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, names[5])
	disk, _ = os.ReadFile(record)
	disk[24+42] ^= 0x04
	if err := os.WriteFile(record, disk, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	if _, err := cas.ReadFile(s, ids[3]); err != nil {
		t.Fatalf("object whose pack index was damaged after indexing: %v", err)
	}
	if _, err := s.Get(ids[5]); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("damaged record: error = %v, want ErrCorrupt", err)
	}
	readAll(t, s, append(ids[:5:5], ids[6:]...))
	if got, _ := s.Packs(); len(got) != len(names) {
		t.Fatalf("Packs() = %d names, want %d", len(got), len(names))
	}
}

// A recorded pack replaced by a damaged file of the same name (here
// shorter, through a rename, so the directory's identity moved) is taken
// by its name: the open stats no pack, and the damage shows when its
// object is read, as corrupt, never as other bytes. Dropping and re-adding
// it (the server's healing) repairs the store, for this process and the
// next.
func TestStoreMergedIndexPackReplacedByDamagedFile(t *testing.T) {
	dir, names, ids := mergedStore(t, 10)
	path := filepath.Join(dir, names[2])
	data, _ := os.ReadFile(path)
	tmp := filepath.Join(dir, ".damaged.tmp")
	if err := os.WriteFile(tmp, data[:30], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	if _, err := s.Get(ids[2]); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("object of the damaged pack: error = %v, want ErrCorrupt", err)
	}
	readAll(t, s, append(ids[:2:2], ids[3:]...))
	if err := s.RemovePack(names[2]); err != nil {
		t.Fatal(err)
	}
	if s.HasPack(names[2]) || s.Has(ids[2]) {
		t.Fatal("a removed pack is reported present")
	}
	if err := s.AddPack(names[2], data); err != nil {
		t.Fatal(err)
	}
	readAll(t, s, ids)
	readAll(t, openStore(t, dir), ids)
}

// A listed pack that was removed is gone after reopening; the others stay.
func TestStoreMergedIndexIgnoredWhenAPackWasRemoved(t *testing.T) {
	dir, names, ids := mergedStore(t, 10)
	if err := os.Remove(filepath.Join(dir, names[7])); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	if _, err := s.Get(ids[7]); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("object of the removed pack: error = %v, want ErrNotFound", err)
	}
	readAll(t, s, append(ids[:7:7], ids[8:]...))
	if got, _ := s.Packs(); len(got) != len(names)-1 {
		t.Fatalf("Packs() = %d names, want %d", len(got), len(names)-1)
	}
}

// A damaged merged index is ignored and rewritten.
func TestStoreMergedIndexDamagedIsIgnored(t *testing.T) {
	dir, _, ids := mergedStore(t, 9)
	path := filepath.Join(dir, ".index")
	for _, at := range []int{0, 20, -40, -1} {
		disk, _ := os.ReadFile(path)
		if at < 0 {
			at += len(disk)
		}
		disk[at] ^= 0x01
		if err := os.WriteFile(path, disk, 0o600); err != nil {
			t.Fatal(err)
		}
		readAll(t, openStore(t, dir), ids)
	}
	if err := os.WriteFile(path, []byte("SLDMIDX1"), 0o600); err != nil {
		t.Fatal(err)
	}
	readAll(t, openStore(t, dir), ids)
}

// Packs added after the merged index was written are loaded on their own.
func TestStoreMergedIndexWithLaterPacks(t *testing.T) {
	dir, _, ids := mergedStore(t, 8)
	other := openStore(t, dir)
	data, id := packOf(t, []byte("added later"))
	if err := other.AddPack("later.pack", data); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	readAll(t, s, append(ids, id))
	if !s.HasPack("later.pack") {
		t.Fatal("the later pack is not loaded")
	}
}

// A pack another process added after the merged index was written is
// loaded by the next open, which records it in the index: the open after
// that takes it from the index without reading the pack, so damage in
// place is not seen at open but on read. The same holds across many
// opens, each adding a pack: past the side index's bound the main index
// is rewritten, and no open loses a pack.
func TestStoreIndexRecordsPacksAddedSince(t *testing.T) {
	dir, _, ids := mergedStore(t, 4)
	var names []string
	for i := range 80 {
		data, id := packOf(t, fmt.Appendf(nil, "added after the index, %d\n", i))
		name := fmt.Sprintf("later-%02d.pack", i)
		s := openStore(t, dir)
		readAll(t, s, ids) // every pack present at open, before this one
		if err := s.AddPack(name, data); err != nil {
			t.Fatal(err)
		}
		s.Close()
		names, ids = append(names, name), append(ids, id)
	}
	openStore(t, dir).Close()           // records the last one
	damaged := []int{4, 4 + 40, 4 + 79} // three of the later packs
	for _, i := range damaged {
		truncateInPlace(t, filepath.Join(dir, names[i-4]), 30)
	}
	s := openStore(t, dir)
	if _, broken := s.Packs(); len(broken) != 0 {
		t.Fatalf("broken = %v at open: a pack the index records was loaded on its own", broken)
	}
	for i, id := range ids {
		_, err := s.Get(id)
		if slices.Contains(damaged, i) {
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("object %d of a damaged pack: error = %v, want ErrCorrupt", i, err)
			}
		} else if err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
	}
}
