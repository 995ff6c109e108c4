package workdir

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// listDir agrees with os.ReadDir and Lstat on names, types and the stat
// fields the cache compares (on Linux it reads getdents64 directly).
func TestListDirMatchesReadDir(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 { // more than one getdents buffer's worth of names
		writeAged(t, filepath.Join(dir, filepath.FromSlash(
			string(rune('a'+i%26))+"-"+string(rune('A'+i/26))+"-a-rather-long-file-name-for-the-buffer.md")), "x", 0)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("sub", filepath.Join(dir, "link"))
	makeFIFO(t, filepath.Join(dir, "fifo"))

	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := listDir(d, nil)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	sort.Slice(got, func(i, j int) bool { return got[i].name < got[j].name })
	for i, w := range want {
		g := got[i]
		if g.name != w.Name() || g.typ != w.Type() {
			t.Fatalf("entry %q type %v, want %q %v", g.name, g.typ, w.Name(), w.Type())
		}
		if w.Type().IsRegular() {
			fi, _ := os.Lstat(filepath.Join(dir, w.Name()))
			if !SameStat(g.st, StatOf(fi)) {
				t.Fatalf("%s: stat %+v, want %+v", g.name, g.st, StatOf(fi))
			}
		}
	}
}
