package cas_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

func openStore(t *testing.T, dir string) *cas.Store {
	t.Helper()
	s, err := cas.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// packOf returns a pack holding one file of content and the file's ID.
func packOf(t *testing.T, content []byte) ([]byte, cas.ID) {
	t.Helper()
	w := cas.NewPackWriter()
	id := mustFile(t, w, content)
	data, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return data, id
}

func TestStoreAddGetReopen(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	content := genText(41, 100<<10)
	data, id := packOf(t, content)
	if err := s.AddPack("1-a.pack", data); err != nil {
		t.Fatal(err)
	}
	if !s.HasPack("1-a.pack") || !s.Has(id) {
		t.Fatal("added pack or its file not reported present")
	}
	for _, st := range []*cas.Store{s, openStore(t, dir)} {
		got, err := cas.ReadFile(st, id)
		if err != nil || string(got) != string(content) {
			t.Fatalf("ReadFile: %v", err)
		}
	}
	if err := s.AddPack("1-a.pack", data); err != nil {
		t.Fatalf("adding the same name again: %v", err)
	}
	if _, err := s.Get(cas.Sum([]byte("absent"))); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("Get(absent) error = %v, want ErrNotFound", err)
	}
}

func TestStoreAddPackRefusesBadPacksAndKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	data, _ := packOf(t, genText(42, 20<<10))
	bad := append([]byte(nil), data...)
	bad[len(bad)/2] ^= 0x10
	if err := s.AddPack("bad.pack", bad); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("AddPack(corrupt) error = %v, want ErrCorrupt", err)
	}
	if err := s.AddPack("short.pack", data[:len(data)-1]); !errors.Is(err, cas.ErrTruncated) {
		t.Fatalf("AddPack(truncated) error = %v, want ErrTruncated", err)
	}
	for _, name := range []string{"", ".hidden", "a/b", `a\b`, "..", "nul\x00"} {
		if err := s.AddPack(name, data); err == nil {
			t.Errorf("AddPack(%q) accepted a bad name", name)
		}
	}
	if des, _ := os.ReadDir(dir); len(des) != 0 {
		t.Fatalf("refused packs left %d files behind", len(des))
	}
}

// Another process adding a pack to the directory is seen on the next miss.
func TestStoreSeesPacksOfOtherProcesses(t *testing.T) {
	dir := t.TempDir()
	reader, writer := openStore(t, dir), openStore(t, dir)
	data, id := packOf(t, []byte("from the other process"))
	if reader.Has(id) {
		t.Fatal("object present before it was added")
	}
	if err := writer.AddPack("2-b.pack", data); err != nil {
		t.Fatal(err)
	}
	if reader.Has(id) {
		t.Fatal("Has looked at the directory; it is documented to use the loaded index only")
	}
	if _, err := cas.ReadFile(reader, id); err != nil {
		t.Fatalf("reader did not pick up the new pack: %v", err)
	}
	if !reader.Has(id) {
		t.Fatal("Has false after Get loaded the new pack")
	}
	data2, id2 := packOf(t, []byte("second pack of the other process"))
	if err := writer.AddPack("3-c.pack", data2); err != nil {
		t.Fatal(err)
	}
	if !reader.HasPack("3-c.pack") || !reader.Has(id2) {
		t.Fatal("HasPack did not load a pack another process added")
	}
	if reader.HasPack("4-absent.pack") {
		t.Fatal("HasPack true for an absent pack")
	}
}

// A pack removed by another process is forgotten; its objects that live in
// another pack stay readable.
func TestStoreSurvivesRemovedPack(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	data, id := packOf(t, []byte("in two packs"))
	for _, name := range []string{"1.pack", "2.pack"} {
		if err := s.AddPack(name, data); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing was read from 1.pack yet, so no handle is open: the read
	// finds the file gone, rescans and reads the copy in 2.pack.
	if err := os.Remove(filepath.Join(dir, "1.pack")); err != nil {
		t.Fatal(err)
	}
	if _, err := cas.ReadFile(s, id); err != nil {
		t.Fatalf("after removing 1.pack: %v", err)
	}
	if names, _ := s.Packs(); len(names) != 1 || names[0] != "2.pack" {
		t.Fatalf("Packs() = %v after removing 1.pack, want [2.pack]", names)
	}
	if err := os.Remove(filepath.Join(dir, "2.pack")); err != nil {
		t.Fatal(err)
	}
	// An open handle may still serve the removed pack's verified bytes
	// until the next scan; after it the object is gone.
	if err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(id); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("after removing both packs: error = %v, want ErrNotFound", err)
	}
}

// Packs in the directory are not re-hashed on open, so damage inside one
// is caught by the ID check when an object is read, and by VerifyPack.
func TestStoreDetectsDamageOnDisk(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	data, id := packOf(t, []byte("will be damaged"))
	if err := s.AddPack("p.pack", data); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "p.pack")
	disk, _ := os.ReadFile(path)
	disk[24+42] ^= 0x04 // first stored byte of the first record
	if err := os.WriteFile(path, disk, 0o600); err != nil {
		t.Fatal(err)
	}
	reopened := openStore(t, dir)
	if _, err := reopened.Get(id); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("Get from a damaged pack: error = %v, want ErrCorrupt", err)
	}
	if err := reopened.VerifyPack("p.pack"); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("VerifyPack error = %v, want ErrCorrupt", err)
	}
}

func TestStoreReportsTruncatedPackOnDisk(t *testing.T) {
	dir := t.TempDir()
	data, id := packOf(t, genBytes(43, 30<<10))
	if err := os.WriteFile(filepath.Join(dir, "cut.pack"), data[:len(data)-100], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".cut.pack.123.tmp"), data[:10], 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	names, broken := s.Packs()
	if len(names) != 0 || !errors.Is(broken["cut.pack"], cas.ErrTruncated) || len(broken) != 1 {
		t.Fatalf("Packs() = %v, %v; want cut.pack broken as truncated, temp file ignored", names, broken)
	}
	if s.Has(id) || s.HasPack("cut.pack") {
		t.Fatal("objects of a truncated pack reported present")
	}
	// Adding the pack again under the broken name repairs it.
	if err := s.AddPack("cut.pack", data); err != nil {
		t.Fatal(err)
	}
	if _, err := cas.ReadFile(s, id); err != nil {
		t.Fatalf("after re-adding: %v", err)
	}
	if _, broken := s.Packs(); len(broken) != 0 {
		t.Fatalf("still broken after re-adding: %v", broken)
	}
}

func TestStoreManyPacksConcurrentReaders(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	const packs = 200
	ids := make([]cas.ID, packs)
	contents := make([][]byte, packs)
	for i := range packs / 2 {
		contents[i] = []byte(fmt.Sprintf("note %d\n", i))
		var data []byte
		data, ids[i] = packOf(t, contents[i])
		if err := s.AddPack(fmt.Sprintf("%d.pack", i), data); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	// A writer in "another process" adds the second half while readers read.
	other := openStore(t, dir)
	wg.Go(func() {
		for i := packs / 2; i < packs; i++ {
			contents[i] = []byte(fmt.Sprintf("note %d\n", i))
			data, id := packOf(t, contents[i])
			if err := other.AddPack(fmt.Sprintf("%d.pack", i), data); err != nil {
				errs <- err
				return
			}
			ids[i] = id
		}
	})
	for g := range 4 {
		wg.Go(func() {
			for i := range packs / 2 {
				j := (i + g*13) % (packs / 2)
				got, err := cas.ReadFile(s, ids[j])
				if err != nil || string(got) != string(contents[j]) {
					errs <- fmt.Errorf("reader %d, file %d: %v", g, j, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range packs {
		if got, err := cas.ReadFile(s, ids[i]); err != nil || string(got) != string(contents[i]) {
			t.Fatalf("file %d after all adds: %v", i, err)
		}
	}
}

func TestStoreClosed(t *testing.T) {
	s, err := cas.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Get(cas.Sum(nil)); !errors.Is(err, cas.ErrStoreClosed) {
		t.Fatalf("Get on a closed store: error = %v, want ErrStoreClosed", err)
	}
}

// A temporary file left by a process that died in AddPack is removed when
// a store is next opened, once it is old enough not to be another
// process's write in progress.
func TestStoreRemovesStaleTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".1.pack.0123.tmp")
	fresh := filepath.Join(dir, ".2.pack.4567.tmp")
	other := filepath.Join(dir, ".keep")
	for _, p := range []string{stale, fresh, other} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{stale, other} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	openStore(t, dir)
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale temporary file kept: %v", err)
	}
	for _, p := range []string{fresh, other} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s removed: %v", filepath.Base(p), err)
		}
	}
}
