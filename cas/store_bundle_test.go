package cas_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// namedPacks returns n one-file packs named "<prefix>-<i>.pack" and the
// IDs of their files.
func namedPacks(t *testing.T, prefix string, n int) ([]cas.NamedPack, []cas.ID) {
	t.Helper()
	var packs []cas.NamedPack
	var ids []cas.ID
	for i := range n {
		data, id := packOf(t, fmt.Appendf(nil, "%s: pack %d\n%s", prefix, i, genText(uint64(100+i), 500)))
		packs = append(packs, cas.NamedPack{Name: fmt.Sprintf("%s-%d.pack", prefix, i), Data: data})
		ids = append(ids, id)
	}
	return packs, ids
}

// storeFiles returns the names of the non-temporary files of dir.
func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".") {
			names = append(names, de.Name())
		}
	}
	return names
}

// bundleOf adds packs with AddPacks to a new store and returns the store's
// directory and the one file they went into.
func bundleOf(t *testing.T, packs []cas.NamedPack) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	if err := openStore(t, dir).AddPacks(packs); err != nil {
		t.Fatal(err)
	}
	files := storeFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("AddPacks of %d packs wrote %v, want one file", len(packs), files)
	}
	return dir, filepath.Join(dir, files[0])
}

// The packs of one AddPacks call land in one file, and each is still a
// pack of its own name: present, readable, verifiable, listed, in this
// store and in a reopened one.
func TestStoreAddPacksWritesOneFile(t *testing.T) {
	packs, ids := namedPacks(t, "inc", 5)
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.AddPacks(packs); err != nil {
		t.Fatal(err)
	}
	if files := storeFiles(t, dir); len(files) != 1 {
		t.Fatalf("files after AddPacks of 5 packs: %v, want one", files)
	}
	for _, st := range []*cas.Store{s, openStore(t, dir)} {
		for i, p := range packs {
			if !st.HasPack(p.Name) {
				t.Fatalf("pack %s not present", p.Name)
			}
			if err := st.VerifyPack(p.Name); err != nil {
				t.Fatalf("VerifyPack(%s): %v", p.Name, err)
			}
			if _, err := cas.ReadFile(st, ids[i]); err != nil {
				t.Fatalf("file of %s: %v", p.Name, err)
			}
		}
		names, broken := st.Packs()
		slices.Sort(names)
		if len(broken) != 0 || !slices.Equal(names, []string{"inc-0.pack", "inc-1.pack", "inc-2.pack", "inc-3.pack", "inc-4.pack"}) {
			t.Fatalf("Packs() = %v, broken %v", names, broken)
		}
	}
}

// Packs already present are not stored again; a single new pack gets a
// plain file of its own name, as AddPack gives it.
func TestStoreAddPacksSkipsPresentPacks(t *testing.T) {
	packs, ids := namedPacks(t, "inc", 4)
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.AddPacks(packs[:3]); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPacks(packs[:3]); err != nil {
		t.Fatal(err)
	}
	if files := storeFiles(t, dir); len(files) != 1 {
		t.Fatalf("files after adding the same packs twice: %v", files)
	}
	if err := s.AddPacks(append(packs[1:], packs[3])); err != nil {
		t.Fatal(err)
	}
	files := storeFiles(t, dir)
	if len(files) != 2 || !slices.Contains(files, "inc-3.pack") {
		t.Fatalf("files after adding one new pack among present ones: %v, want the bundle and inc-3.pack", files)
	}
	readAll(t, openStore(t, dir), ids)
}

// One bad pack refuses the whole call: nothing is stored.
func TestStoreAddPacksRefusesBadPackAndKeepsNothing(t *testing.T) {
	packs, _ := namedPacks(t, "inc", 3)
	bad := bytes.Clone(packs[1].Data)
	bad[40] ^= 0x01
	packs[1].Data = bad
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.AddPacks(packs); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("AddPacks with a damaged pack: error = %v, want ErrCorrupt", err)
	}
	if files := storeFiles(t, dir); len(files) != 0 {
		t.Fatalf("files after a refused AddPacks: %v", files)
	}
	for _, p := range packs {
		if s.HasPack(p.Name) {
			t.Fatalf("pack %s present after a refused AddPacks", p.Name)
		}
	}
	for _, name := range []string{"x.bundle", ".x", "a/b", ""} {
		err := s.AddPacks([]cas.NamedPack{{Name: name, Data: packs[0].Data}})
		if err == nil || s.HasPack(name) {
			t.Fatalf("pack name %q accepted", name)
		}
	}
}

// Removing a pack of a bundle drops the whole bundle: every pack it held
// is gone from this store and others, and can be added again.
func TestStoreRemovePackDropsItsBundle(t *testing.T) {
	packs, ids := namedPacks(t, "inc", 3)
	plain, plainID := packOf(t, []byte("a pack of its own\n"))
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.AddPacks(packs); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPack("own.pack", plain); err != nil {
		t.Fatal(err)
	}
	other := openStore(t, dir)
	if err := s.RemovePack("inc-1.pack"); err != nil {
		t.Fatal(err)
	}
	if err := other.Refresh(); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*cas.Store{s, other} {
		for i, p := range packs {
			if st.HasPack(p.Name) {
				t.Fatalf("pack %s present after its bundle was removed", p.Name)
			}
			if _, err := st.Get(ids[i]); !errors.Is(err, cas.ErrNotFound) {
				t.Fatalf("object of a removed bundle: error = %v, want ErrNotFound", err)
			}
		}
		if _, err := cas.ReadFile(st, plainID); err != nil {
			t.Fatalf("the pack outside the bundle: %v", err)
		}
	}
	if err := s.RemovePack("inc-1.pack"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("removing an absent pack: error = %v, want fs.ErrNotExist", err)
	}
	if err := s.AddPacks(packs); err != nil {
		t.Fatal(err)
	}
	readAll(t, s, ids)
	if err := s.RemovePack("own.pack"); err != nil || s.HasPack("own.pack") {
		t.Fatalf("removing a plain pack: %v", err)
	}
}

// A bundle that cannot be loaded is reported by its file name, and
// RemovePack removes it.
func TestStoreRemovePackRemovesBrokenBundle(t *testing.T) {
	packs, _ := namedPacks(t, "inc", 2)
	dir, file := bundleOf(t, packs)
	if err := os.Truncate(file, 100); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	_, broken := s.Packs()
	name := filepath.Base(file)
	if !errors.Is(broken[name], cas.ErrTruncated) {
		t.Fatalf("Packs() broken = %v, want %s truncated", broken, name)
	}
	if err := s.RemovePack(name); err != nil {
		t.Fatal(err)
	}
	if files := storeFiles(t, dir); len(files) != 0 {
		t.Fatalf("files left: %v", files)
	}
	if _, broken := s.Packs(); len(broken) != 0 {
		t.Fatalf("still broken: %v", broken)
	}
}

// Bundles are recorded in the merged index with their packs' names: a
// reopened store knows every pack without reading the bundles.
func TestStoreMergedIndexListsBundledPacks(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	var all []cas.NamedPack
	var ids []cas.ID
	for b := range 9 {
		packs, bids := namedPacks(t, fmt.Sprint("b", b), 2)
		if err := s.AddPacks(packs); err != nil {
			t.Fatal(err)
		}
		all, ids = append(all, packs...), append(ids, bids...)
	}
	openStore(t, dir) // loads every bundle on its own and records the index
	if _, err := os.Stat(filepath.Join(dir, ".index")); err != nil {
		t.Fatalf("no merged index: %v", err)
	}
	// Damage every bundle's header: only a store that does not read them
	// still knows their packs.
	for _, name := range storeFiles(t, dir) {
		path := filepath.Join(dir, name)
		data, _ := os.ReadFile(path)
		data[30] ^= 0xff
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := openStore(t, dir)
	for _, p := range all {
		if !r.HasPack(p.Name) {
			t.Fatalf("pack %s not known through the merged index", p.Name)
		}
	}
	readAll(t, r, ids)
}

// A bundle added by another process is seen after Refresh.
func TestStoreSeesBundlesOfOtherProcesses(t *testing.T) {
	packs, ids := namedPacks(t, "inc", 3)
	dir := t.TempDir()
	reader := openStore(t, dir)
	if err := openStore(t, dir).AddPacks(packs); err != nil {
		t.Fatal(err)
	}
	readAll(t, reader, ids) // a Get that misses rescans
	if err := reader.Refresh(); err != nil {
		t.Fatal(err)
	}
	for _, p := range packs {
		if !reader.HasPack(p.Name) {
			t.Fatalf("pack %s of another store not seen", p.Name)
		}
	}
}

// A merged index of the layout before bundles ("SLDMIDX1") is ignored and
// replaced: every pack of the store it describes is still read.
func TestStoreReplacesPreBundleMergedIndex(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	var ids []cas.ID
	old := binary.LittleEndian.AppendUint32([]byte("SLDMIDX1"), 10)
	for i := range 10 {
		data, id := packOf(t, fmt.Appendf(nil, "pack %d\n", i))
		name := fmt.Sprintf("%02d.pack", i)
		if err := s.AddPack(name, data); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		old = binary.LittleEndian.AppendUint16(old, uint16(len(name)))
		old = append(old, name...)
		old = binary.LittleEndian.AppendUint64(old, uint64(len(data)))
	}
	old = binary.LittleEndian.AppendUint32(old, 0) // no entries: useless if taken
	sum := cas.Sum(old)
	path := filepath.Join(dir, ".index")
	if err := os.WriteFile(path, append(old, sum[:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	readAll(t, openStore(t, dir), ids)
	if got, err := os.ReadFile(path); err != nil || !bytes.HasPrefix(got, []byte("SLDMIDX3")) {
		t.Fatalf("merged index not rewritten: %.8q, %v", got, err)
	}
	readAll(t, openStore(t, dir), ids)
}
