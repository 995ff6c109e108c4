package workdir

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// A long-lived process's scans start from the last scan's files (carried)
// yet return what a scan from nothing returns, whatever happens between
// them: files edited, added and removed, directories created, removed,
// renamed and replaced by files, and now and then a stat cache that is
// not the last one. memScan compares every scan with a fresh one.
func TestCarriedFilesMatchAFreshScanAfterEveryChange(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "L")
	rng := rand.New(rand.NewPCG(42, 7))
	dirs := []string{"", "a/", "a/b/", "a/b/c/", "d/", "d/e/", "f/"}
	path := func() string {
		return dirs[rng.IntN(len(dirs))] + fmt.Sprintf("n%d.md", rng.IntN(6))
	}
	put := func(p, content string) {
		// A file where a directory of p is to be (left by a step below)
		// is removed first.
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			if fi, err := os.Lstat(filepath.Join(dir, d)); err == nil && !fi.IsDir() {
				os.Remove(filepath.Join(dir, d))
			}
		}
		writeAged(t, filepath.Join(dir, p), content, time.Hour)
	}
	for range 30 {
		put(path(), "seed\n")
	}
	mem := NewWatchedListings()
	defer mem.Close()
	needWatch(t, dir, mem)
	res, _ := memScan(t, dir, NewStatCache(), mem)
	for step := range 200 {
		switch k := rng.IntN(10); {
		case k < 4: // edit or add
			put(path(), fmt.Sprintf("step %d\n", step))
		case k < 6:
			os.Remove(filepath.Join(dir, path()))
		case k == 6: // a directory removed, or renamed over a fresh name
			d := dirs[1+rng.IntN(len(dirs)-1)]
			if rng.IntN(2) == 0 {
				os.RemoveAll(filepath.Join(dir, d))
			} else {
				os.Rename(filepath.Join(dir, d), filepath.Join(dir, fmt.Sprintf("moved%d", step)))
			}
		case k == 7: // a directory replaced by a file of its name
			d := dirs[1+rng.IntN(len(dirs)-1)]
			os.RemoveAll(filepath.Join(dir, d))
			put(d[:len(d)-1], "a file\n")
			os.Remove(filepath.Join(dir, d[:len(d)-1]+".md")) // (sometimes there)
			if rng.IntN(2) == 0 {
				os.Remove(filepath.Join(dir, d[:len(d)-1]))
			}
		case k == 8: // nothing changed
		default: // an invalid name, which the scan refuses
			put(dirs[rng.IntN(len(dirs))]+"bad:name.md", "x\n")
		}
		cache := res.Stats
		if rng.IntN(15) == 0 {
			cache = NewStatCache() // another cache: nothing carried applies
		}
		res, _ = memScan(t, dir, cache, mem)
	}
}

// The Files a scan returns are the caller's: the engine keeps them as L's
// tree and adds A's ignored files to them, and the next scan, which
// starts from the last scan's files, neither sees those additions nor
// changes a map it returned before.
func TestCarriedFilesAreTheCallersOwn(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.md", "x/b.md", "x/y/c.md", "z/d.md"} {
		writeAged(t, filepath.Join(dir, p), p+"\n", time.Hour)
	}
	mem := NewWatchedListings()
	defer mem.Close()
	needWatch(t, dir, mem)
	first, _ := memScan(t, dir, NewStatCache(), mem)
	kept := maps.Clone(first.Files)
	first.Files["ignored/by-the-engine.md"] = cas.ID{1} // as plan.AddVirtual does
	delete(first.Files, "a.md")
	writeAged(t, filepath.Join(dir, "x/y/c.md"), "changed\n", time.Hour)
	os.Remove(filepath.Join(dir, "z/d.md"))
	second, _ := memScan(t, dir, first.Stats, mem) // equal to a fresh scan
	if _, ok := second.Files["ignored/by-the-engine.md"]; ok {
		t.Fatal("the next scan saw an entry the caller added")
	}
	delete(first.Files, "ignored/by-the-engine.md")
	kept2 := maps.Clone(second.Files)
	writeAged(t, filepath.Join(dir, "x/b.md"), "changed too\n", time.Hour)
	memScan(t, dir, second.Stats, mem)
	delete(kept, "a.md")
	if !maps.Equal(first.Files, kept) || !maps.Equal(second.Files, kept2) {
		t.Fatalf("a later scan changed the maps returned before:\n%v\n%v", first.Files, second.Files)
	}
}
