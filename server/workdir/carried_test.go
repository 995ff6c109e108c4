package workdir

import (
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// A long-lived process's scans start from the last scan's files (carried),
// keep a directory's listing when only the content of files in it
// changed, and skip whole subtrees the watch proves unchanged, yet return
// what a scan from nothing returns, whatever happens between them (one to
// three changes at a time): files edited (rewritten, appended to in
// place, chmod-ed, saved through a temporary file and a rename), added
// and removed, replaced by directories, directories created, removed,
// renamed (within L and out of it) and replaced by files, ignore rules
// changed, the event queue overflowed, and now and then a stat cache that
// is not the last one. memScanUnder compares every scan with a fresh one.
func TestCarriedFilesMatchAFreshScanAfterEveryChange(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "L")
	rng := rand.New(rand.NewPCG(42, 7))
	dirs := []string{"", "a/", "a/b/", "a/b/c/", "a/g/", "d/", "d/e/", "d/e/h/", "f/"}
	path := func() string {
		return dirs[rng.IntN(len(dirs))] + fmt.Sprintf("n%d.md", rng.IntN(6))
	}
	put := func(p, content string) {
		// A file where a directory of p is to be, or a directory at p
		// (left by a change below), is removed first.
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			if fi, err := os.Lstat(filepath.Join(dir, d)); err == nil && !fi.IsDir() {
				os.Remove(filepath.Join(dir, d))
			}
		}
		if fi, err := os.Lstat(filepath.Join(dir, p)); err == nil && fi.IsDir() {
			os.RemoveAll(filepath.Join(dir, p))
		}
		writeAged(t, filepath.Join(dir, p), content, time.Hour)
	}
	ruleSets := [][]string{nil, {"n3.md"}, {"b/"}, {"/d/e/", "n0.md"}, {"h/"}}
	rules := Rules{TempsOurs: true}
	for range 40 {
		put(path(), "seed\n")
	}
	mem := NewWatchedListings()
	defer mem.Close()
	needWatch(t, dir, mem)
	change := randomChange(t, dir, rng, dirs, path, put, &rules, ruleSets, mem)
	res, _ := memScanUnder(t, dir, NewStatCache(), rules, mem)
	skipped, restated := subtreesSkipped.Load(), filesRestated.Load()
	topInPlace := 0 // scans that re-stat-ed a file of L's top and skipped a subtree
	for step := range 400 {
		inPlaceAtTop := false
		for range 1 + rng.IntN(3) {
			if change(step) {
				inPlaceAtTop = true
			}
		}
		cache := res.Stats
		if rng.IntN(25) == 0 {
			cache = NewStatCache() // another cache: nothing carried applies
		}
		sk, rs := subtreesSkipped.Load(), filesRestated.Load()
		res, _ = memScanUnder(t, dir, cache, rules, mem)
		if inPlaceAtTop && subtreesSkipped.Load() > sk && filesRestated.Load() > rs {
			topInPlace++
		}
	}
	if n := subtreesSkipped.Load() - skipped; n < 100 {
		t.Fatalf("%d subtrees skipped in 400 scans: the test does not exercise skipping", n)
	}
	if n := filesRestated.Load() - restated; n < 100 || topInPlace < 10 {
		t.Fatalf("%d files re-stat-ed in 400 scans, %d scans with one of L's top and a subtree skipped: "+
			"the test does not exercise listings kept through content events", n, topInPlace)
	}
}

// randomChange is one change of TestCarriedFilesMatchAFreshScanAfterEveryChange.
func randomChange(t *testing.T, dir string, rng *rand.Rand, dirs []string, path func() string, put func(p, content string),
	rules *Rules, ruleSets [][]string, mem *WatchedListings) func(step int) bool {
	return func(step int) (inPlaceAtTop bool) {
		switch k := rng.IntN(20); {
		case k < 4: // edit or add
			put(path(), fmt.Sprintf("step %d\n", step))
		case k < 8: // a file changed in place: appended to (aged or not), chmod-ed, touched
			var files []string // the regular files there are (of L's top, one time in three)
			top := rng.IntN(3) == 0
			filepath.WalkDir(dir, func(f string, e fs.DirEntry, err error) error {
				if err == nil && e.Type().IsRegular() && (!top || filepath.Dir(f) == dir) {
					files = append(files, f)
				}
				return nil
			})
			if len(files) == 0 {
				return false
			}
			f := files[rng.IntN(len(files))]
			switch rng.IntN(4) {
			case 0:
				appendTo(t, f, fmt.Sprintf("step %d\n", step))
			case 1:
				fh, err := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				fh.WriteString("fresh\n")
				fh.Close()
			case 2:
				os.Chmod(f, os.FileMode(0o600+rng.IntN(2)*0o44))
			default:
				old := time.Now().Add(-time.Duration(1+rng.IntN(100)) * time.Hour)
				os.Chtimes(f, old, old)
			}
			return filepath.Dir(f) == dir
		case k == 8: // an editor's save: a temporary file renamed over the file
			p := filepath.Join(dir, path())
			tmp := filepath.Join(filepath.Dir(p), ".swp")
			if err := os.WriteFile(tmp, []byte(fmt.Sprintf("saved %d\n", step)), 0o644); err == nil {
				os.Rename(tmp, p)
				os.Remove(tmp) // (left when p's directory is gone)
			}
		case k == 9: // a file replaced by a directory of its name
			p := filepath.Join(dir, path())
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				os.Remove(p)
				writeAged(t, filepath.Join(p, "n0.md"), "in a directory\n", time.Hour)
			}
		case k < 12:
			os.RemoveAll(filepath.Join(dir, path())) // (a file, or a directory that replaced one)
		case k == 12: // a directory removed, or renamed out of the names used
			d := dirs[1+rng.IntN(len(dirs)-1)]
			if rng.IntN(2) == 0 {
				os.RemoveAll(filepath.Join(dir, d))
			} else {
				os.Rename(filepath.Join(dir, d), filepath.Join(dir, fmt.Sprintf("moved%d", step)))
			}
		case k == 13: // a directory renamed to another name of the tree (with what it holds)
			from, to := dirs[1+rng.IntN(len(dirs)-1)], dirs[1+rng.IntN(len(dirs)-1)]
			os.MkdirAll(filepath.Dir(filepath.Join(dir, to[:len(to)-1])), 0o755)
			os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)) // (fails when to is not empty)
		case k == 14: // a directory replaced by a file of its name
			d := dirs[1+rng.IntN(len(dirs)-1)]
			os.RemoveAll(filepath.Join(dir, d))
			put(d[:len(d)-1], "a file\n")
			os.Remove(filepath.Join(dir, d[:len(d)-1]+".md")) // (sometimes there)
			if rng.IntN(2) == 0 {
				os.Remove(filepath.Join(dir, d[:len(d)-1]))
			}
		case k == 15: // other ignore rules (sometimes the same ones anew)
			ign, err := NewIgnore(ruleSets[rng.IntN(len(ruleSets))], false)
			if err != nil {
				t.Fatal(err)
			}
			rules.Ignore = ign
		case k == 16: // the event queue overflowed
			mem.mu.Lock()
			mem.forget(-1)
			mem.mu.Unlock()
		case k == 17: // an invalid name, which the scan refuses, or its removal
			p := dirs[rng.IntN(len(dirs))] + "bad:name.md"
			if rng.IntN(2) == 0 {
				put(p, "x\n")
			} else {
				os.Remove(filepath.Join(dir, p))
			}
		default: // nothing changed
		}
		return false
	}
}

// A scan visits only the directories on the path to a change: the others
// are skipped whole, their files carried, until something in them
// changes.
func TestWatchedScanSkipsUnchangedSubtrees(t *testing.T) {
	dir := t.TempDir()
	mem := watchedTree(t, dir, "a.md", "x/b.md", "x/y/c.md", "x/w/e.md", "z/d.md", "z/v/f.md")
	res, _ := memScan(t, dir, NewStatCache(), mem)
	res, _ = memScan(t, dir, res.Stats, mem) // every file read before: now each directory settles
	walked := func(want int64, why string) {
		t.Helper()
		res, _ = memScan(t, dir, res.Stats, mem)
		if got := lastWalked; got != want {
			t.Fatalf("%s: %d directories walked, want %d", why, got, want)
		}
	}
	walked(0, "nothing changed") // L itself skipped whole
	writeAged(t, filepath.Join(dir, "x/y/c.md"), "changed\n", time.Hour)
	walked(3, "x/y/c.md changed")                   // L, x and x/y: not x/w, z, z/v
	walked(3, "the directory read is walked again") // its outcome is kept now
	walked(0, "nothing changed since")
	if err := os.Rename(filepath.Join(dir, "z/v"), filepath.Join(dir, "x/v")); err != nil {
		t.Fatal(err)
	}
	res, _ = memScan(t, dir, res.Stats, mem) // (equal to a fresh scan)
	if _, ok := res.Files["x/v/f.md"]; !ok {
		t.Fatal("the renamed directory's file is missing")
	}
	memScan(t, dir, res.Stats, mem)
	walked(0, "nothing changed after the rename")
}

// The Files a scan returns are the caller's: the engine keeps them as L's
// tree and adds A's ignored files to them, and the next scan, which
// starts from the last scan's files, neither sees those additions nor
// changes a map it returned before.
func TestCarriedFilesAreTheCallersOwn(t *testing.T) {
	dir := t.TempDir()
	mem := watchedTree(t, dir)
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

// The caller may change the map it was handed at once, scan after scan,
// as the engine does, and neither the next scan's result nor any map
// handed out before sees it. Under the race detector (make race) this
// also checks that the scan's own copy (carried) and the caller's never
// share a map, should that copy ever be made beside the caller.
func TestCarriedFilesUnseenByTheCallersWritesAtOnce(t *testing.T) {
	dir := t.TempDir()
	mem := watchedTree(t, dir)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cache := NewStatCache()
	var held, want []map[string]cas.ID
	for i := range 8 {
		res, err := Scan(r, cache, Rules{TempsOurs: true}, mem)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := res.Files["a.md"]; !ok || len(res.Files) != 4 {
			t.Fatalf("scan %d: %v (the caller's changes to an earlier map seen)", i, res.Files)
		}
		res.Files[fmt.Sprintf("virtual/%d.md", i)] = cas.ID{byte(i)} // at once, as plan.AddVirtual does
		delete(res.Files, "a.md")
		held, want = append(held, res.Files), append(want, maps.Clone(res.Files))
		appendTo(t, filepath.Join(dir, []string{"x/y/c.md", "a.md"}[i%2]), fmt.Sprintf("scan %d\n", i))
	}
	memScan(t, dir, cache, mem) // (equal to a fresh scan)
	for i := range held {
		if !maps.Equal(held[i], want[i]) {
			t.Fatalf("the map of scan %d changed after it was handed out:\n%v\n%v", i, held[i], want[i])
		}
	}
}
