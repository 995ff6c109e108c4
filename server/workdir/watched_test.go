package workdir

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"
)

// memScan scans dir with mem and checks the result against a scan of the
// same tree without any memory (the oracle); it returns the listing and
// how many directories were listed from the file system.
func memScan(t *testing.T, dir string, cache *StatCache, mem *WatchedListings) (*Listing, int64) {
	t.Helper()
	return memScanUnder(t, dir, cache, Rules{TempsOurs: true}, mem)
}

// lastWalked is how many directories memScanUnder's scan with memory
// walked (not the oracle's).
var lastWalked int64

// memScanUnder is memScan under rules: the ignored entries are compared too.
func memScanUnder(t *testing.T, dir string, cache *StatCache, rules Rules, mem *WatchedListings) (*Listing, int64) {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before := dirsListed.Load()
	walked := dirsWalked.Load()
	got, err := Scan(r, cache, rules, mem)
	if err != nil {
		t.Fatal(err)
	}
	listed := dirsListed.Load() - before
	lastWalked = dirsWalked.Load() - walked
	fresh, err := Scan(r, NewStatCache(), rules, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Files, fresh.Files) || !reflect.DeepEqual(got.Invalid, fresh.Invalid) {
		t.Fatalf("with memory:\n %v %v\nfresh:\n %v %v", got.Files, got.Invalid, fresh.Files, fresh.Invalid)
	}
	if g, f := slices.Sorted(slices.Values(got.Markers)), slices.Sorted(slices.Values(fresh.Markers)); !slices.Equal(g, f) {
		t.Fatalf("marker files with memory %v, fresh %v", g, f)
	}
	if !slices.Equal(got.Ignored, fresh.Ignored) {
		t.Fatalf("ignored with memory %v, fresh %v", got.Ignored, fresh.Ignored)
	}
	return got, listed
}

func needWatch(t *testing.T, dir string, mem *WatchedListings) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("no change watch on " + runtime.GOOS)
	}
	memScan(t, dir, NewStatCache(), mem)
	if mem.w == nil {
		t.Skip("no inotify on this file system")
	}
}

// watchedTree writes aged files to dir (files, or by default a.md, x/b.md,
// x/y/c.md, z/d.md) and returns a watch that has scanned it once,
// closed when the test ends; it skips where no change watch exists.
func watchedTree(t *testing.T, dir string, files ...string) *WatchedListings {
	t.Helper()
	if len(files) == 0 {
		files = []string{"a.md", "x/b.md", "x/y/c.md", "z/d.md"}
	}
	for _, p := range files {
		writeAged(t, filepath.Join(dir, p), p+"\n", time.Hour)
	}
	mem := NewWatchedListings()
	t.Cleanup(func() { mem.Close() })
	needWatch(t, dir, mem)
	return mem
}

// A second scan of an unchanged tree lists nothing; a change lists only
// the directory it is in.
func TestWatchedListingsReusesUnchangedListings(t *testing.T) {
	dir := t.TempDir()
	mem := watchedTree(t, dir)
	cache := NewStatCache()
	first, _ := memScan(t, dir, cache, mem)
	_, listed := memScan(t, dir, first.Stats, mem)
	if listed != 0 {
		t.Fatalf("an unchanged tree: %d directories listed, want 0", listed)
	}
	restated := filesRestated.Load()
	writeAged(t, filepath.Join(dir, "x/y/c.md"), "changed\n", time.Hour)
	res, listed := memScan(t, dir, first.Stats, mem)
	if listed != 0 || filesRestated.Load()-restated != 1 {
		t.Fatalf("one file's content changed: %d directories listed, %d files re-stat-ed; want 0 and 1 (x/y's listing stands)",
			listed, filesRestated.Load()-restated)
	}
	if _, ok := res.Content["x/y/c.md"]; !ok {
		t.Fatal("the changed file was not read")
	}
	writeAged(t, filepath.Join(dir, "x/y/new.md"), "new\n", time.Hour)
	if _, listed := memScan(t, dir, res.Stats, mem); listed != 1 {
		t.Fatalf("one file added: %d directories listed, want 1 (x/y)", listed)
	}
}

// An event that says only that a file's content or attributes changed
// keeps its directory's listing (the file is re-stat-ed), so the
// subtrees below stay skipped; an event that may change the entries
// (an editor's save through a temporary file and a rename, a file
// replaced by a directory) lists the directory again.
func TestWatchedScanKeepsTheListingOnContentEvents(t *testing.T) {
	dir := t.TempDir()
	mem := watchedTree(t, dir)
	res, _ := memScan(t, dir, NewStatCache(), mem)
	res, _ = memScan(t, dir, res.Stats, mem) // every file read before: now each directory settles
	scan := func(why string, wantListed, wantWalked int64) {
		t.Helper()
		var listed int64
		res, listed = memScan(t, dir, res.Stats, mem) // (equal to a fresh scan)
		if listed != wantListed || lastWalked != wantWalked {
			t.Fatalf("%s: %d directories listed and %d walked, want %d and %d", why, listed, lastWalked, wantListed, wantWalked)
		}
	}
	// Each change to files already there, aged: a scan reads the file;
	// the next keeps its directory's outcome, after which it settles.
	changed := func(why string, walked int64) {
		t.Helper()
		scan(why, 0, walked)
		scan(why+", then nothing", 0, walked)
		scan(why+", then nothing twice", 0, 0)
	}
	top := filepath.Join(dir, "a.md")
	appendTo(t, top, "more\n")
	changed("a.md appended to", 1) // L walked from its listing; x and z skipped
	os.Chmod(top, 0o600)
	changed("a.md chmod-ed", 1)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(dir, "x/b.md"), old, old)
	changed("x/b.md touched", 2) // L and x; x/y and z skipped
	// An editor's save: a new file renamed over the old one.
	tmp := filepath.Join(dir, ".a.md.swp")
	writeAged(t, tmp, "saved\n", time.Hour)
	if err := os.Rename(tmp, top); err != nil {
		t.Fatal(err)
	}
	scan("a.md saved through a rename", 1, 3) // L listed, x and z opened and compared
	if string(res.Content["a.md"]) != "saved\n" {
		t.Fatalf("a.md read as %q", res.Content["a.md"])
	}
	scan("saved, then nothing", 0, 1)
	scan("saved, then nothing twice", 0, 0)
	// A file replaced by a directory of its name.
	os.Remove(filepath.Join(dir, "z/d.md"))
	writeAged(t, filepath.Join(dir, "z/d.md/e.md"), "e\n", time.Hour)
	res, _ = memScan(t, dir, res.Stats, mem)
	if _, ok := res.Files["z/d.md/e.md"]; !ok {
		t.Fatal("the file in the directory that replaced z/d.md is missing")
	}
}

// appendTo appends s to the file at p and ages it by an hour (content
// events only: the file is neither created nor renamed).
func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// Every change a user or another process can make between two calls is
// seen: the result always equals a fresh scan's (memScan checks it).
func TestWatchedListingsNoticesEveryChange(t *testing.T) {
	changes := []struct {
		name string
		do   func(t *testing.T, dir string, mem *WatchedListings)
		want func(t *testing.T, res *Listing)
	}{
		{"same size and mtime", func(t *testing.T, dir string, mem *WatchedListings) {
			p := filepath.Join(dir, "x/b.md")
			fi, _ := os.Stat(p)
			os.WriteFile(p, []byte("B.MD\n"), 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, nil},
		{"replaced by rename, same size and mtime", func(t *testing.T, dir string, mem *WatchedListings) {
			p := filepath.Join(dir, "x/b.md")
			fi, _ := os.Stat(p)
			tmp := filepath.Join(dir, "..", "replacement")
			os.WriteFile(tmp, []byte("b.mD\n"), 0o644)
			os.Chtimes(tmp, fi.ModTime(), fi.ModTime())
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"chmod only", func(t *testing.T, dir string, mem *WatchedListings) {
			os.Chmod(filepath.Join(dir, "a.md"), 0o600)
		}, nil},
		{"file added deep", func(t *testing.T, dir string, mem *WatchedListings) {
			writeAged(t, filepath.Join(dir, "x/y/new.md"), "new\n", time.Hour)
		}, func(t *testing.T, res *Listing) {
			if _, ok := res.Files["x/y/new.md"]; !ok {
				t.Fatal("new file not seen")
			}
		}},
		{"file removed", func(t *testing.T, dir string, mem *WatchedListings) {
			os.Remove(filepath.Join(dir, "z/d.md"))
		}, nil},
		{"directory renamed", func(t *testing.T, dir string, mem *WatchedListings) {
			os.Rename(filepath.Join(dir, "x"), filepath.Join(dir, "w"))
		}, nil},
		{"directory replaced by another", func(t *testing.T, dir string, mem *WatchedListings) {
			os.Rename(filepath.Join(dir, "x"), filepath.Join(dir, "..", "old-x"))
			writeAged(t, filepath.Join(dir, "x/y/c.md"), "other c\n", time.Hour)
		}, nil},
		{"directory replaced by a file", func(t *testing.T, dir string, mem *WatchedListings) {
			os.RemoveAll(filepath.Join(dir, "z"))
			writeAged(t, filepath.Join(dir, "z"), "z is a file\n", time.Hour)
		}, nil},
		{"notebook directory replaced", func(t *testing.T, dir string, mem *WatchedListings) {
			os.Rename(dir, dir+"-old")
			writeAged(t, filepath.Join(dir, "a.md"), "a new notebook\n", time.Hour)
		}, func(t *testing.T, res *Listing) {
			if len(res.Files) != 1 {
				t.Fatalf("the replaced notebook: %v", res.Files)
			}
		}},
		{"invalid name added", func(t *testing.T, dir string, mem *WatchedListings) {
			writeAged(t, filepath.Join(dir, "x/bad:name.md"), "x\n", time.Hour)
		}, func(t *testing.T, res *Listing) {
			if len(res.Invalid) != 1 {
				t.Fatalf("invalid %v", res.Invalid)
			}
		}},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "L")
			mem := watchedTree(t, dir)
			first, _ := memScan(t, dir, NewStatCache(), mem)
			if _, listed := memScan(t, dir, first.Stats, mem); listed != 0 {
				t.Fatalf("%d directories listed before the change", listed)
			}
			c.do(t, dir, mem)
			res, _ := memScan(t, dir, first.Stats, mem) // equal to a fresh scan
			if c.want != nil {
				c.want(t, res)
			}
			if _, listed := memScan(t, dir, res.Stats, mem); listed != 0 {
				t.Fatalf("%d directories listed after the change was taken in", listed)
			}
		})
	}
}

// A file edited twice within one timestamp tick, the second time after
// it was read: the second edit keeps size and mtime, and is still seen.
func TestWatchedListingsEditWithinOneTick(t *testing.T) {
	dir := t.TempDir()
	writeAged(t, filepath.Join(dir, "old.md"), "old\n", time.Hour)
	mem := NewWatchedListings()
	defer mem.Close()
	needWatch(t, dir, mem)
	p := filepath.Join(dir, "hot.md")
	os.WriteFile(p, []byte("v1\n"), 0o644)
	fi, _ := os.Stat(p)
	res, _ := memScan(t, dir, NewStatCache(), mem)
	os.WriteFile(p, []byte("v2\n"), 0o644)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	res, _ = memScan(t, dir, res.Stats, mem)
	if string(res.Content["hot.md"]) != "v2\n" {
		t.Fatalf("read %q", res.Content["hot.md"])
	}
}

// An overflowed event queue, or a scan that failed, forgets every
// listing.
func TestWatchedListingsForgetsOnOverflowAndFailure(t *testing.T) {
	dir := t.TempDir()
	writeAged(t, filepath.Join(dir, "x/a.md"), "a\n", time.Hour)
	mem := NewWatchedListings()
	defer mem.Close()
	needWatch(t, dir, mem)
	res, _ := memScan(t, dir, NewStatCache(), mem)
	mem.mu.Lock()
	mem.forget(-1)
	mem.mu.Unlock()
	if _, listed := memScan(t, dir, res.Stats, mem); listed != 2 {
		t.Fatalf("after an overflow %d directories listed, want 2", listed)
	}
	mem.end(false, nil, nil)
	if _, listed := memScan(t, dir, res.Stats, mem); listed != 2 {
		t.Fatalf("after a failed scan %d directories listed, want 2", listed)
	}
}

// A directory holding a file with another hard link is listed every time:
// an edit through the other link raises no event on its watch.
func TestWatchedListingsHardLinkedFileIsAlwaysStatted(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "L")
	writeAged(t, filepath.Join(dir, "x/a.md"), "a\n", time.Hour)
	writeAged(t, filepath.Join(dir, "y/b.md"), "b\n", time.Hour)
	outside := filepath.Join(base, "outside.md")
	if err := os.Link(filepath.Join(dir, "x/a.md"), outside); err != nil {
		t.Skip(err)
	}
	mem := NewWatchedListings()
	defer mem.Close()
	needWatch(t, dir, mem)
	res, _ := memScan(t, dir, NewStatCache(), mem)
	if _, listed := memScan(t, dir, res.Stats, mem); listed != 1 {
		t.Fatalf("%d directories listed, want 1 (x, which holds the linked file)", listed)
	}
	fi, _ := os.Stat(outside)
	os.WriteFile(outside, []byte("A\n"), 0o644)
	os.Chtimes(outside, fi.ModTime(), fi.ModTime())
	if res, _ = memScan(t, dir, res.Stats, mem); string(res.Content["x/a.md"]) != "A\n" {
		t.Fatal("the edit through the other link was not seen")
	}
}

// A remembered outcome holds only against the stat cache it was found
// with: another cache (P's copy, reloaded) is consulted entry by entry.
func TestWatchedListingsOutcomeNeedsTheSameCache(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.md", "x/b.md", "x/y/c.md"} {
		writeAged(t, filepath.Join(dir, p), p+"\n", time.Hour)
	}
	mem := NewWatchedListings()
	defer mem.Close()
	needWatch(t, dir, mem)
	res, _ := memScan(t, dir, NewStatCache(), mem)
	if again, listed := memScan(t, dir, res.Stats, mem); listed != 0 || len(again.Content) != 0 {
		t.Fatalf("warm: %d listed, %d read", listed, len(again.Content))
	}
	other, listed := memScan(t, dir, NewStatCache(), mem)
	if listed != 0 || len(other.Content) != 3 {
		t.Fatalf("with an empty cache: %d listed, %d read, want 0 and 3", listed, len(other.Content))
	}
}

// Files holding conflict blocks are listed by every scan, whether their
// directory is walked or remembered, until the blocks are resolved.
func TestWatchedListingsListsMarkerFiles(t *testing.T) {
	dir := t.TempDir()
	block := "<<<<<<< local\nmine\n=======\ntheirs\n>>>>>>> remote\n"
	writeAged(t, filepath.Join(dir, "x", "c.md"), "a\n"+block, time.Hour)
	writeAged(t, filepath.Join(dir, "x", "d.md"), "plain\n", time.Hour)
	writeAged(t, filepath.Join(dir, "y", "e.md"), block, time.Hour)
	mem := NewWatchedListings()
	defer mem.Close()
	needWatch(t, dir, mem)
	cache := NewStatCache()
	for _, want := range [][]string{{"x/c.md", "y/e.md"}, {"x/c.md", "y/e.md"}} {
		got, _ := memScan(t, dir, cache, mem)
		if m := slices.Sorted(slices.Values(got.Markers)); !slices.Equal(m, want) {
			t.Fatalf("marker files %v, want %v", m, want)
		}
	}
	writeAged(t, filepath.Join(dir, "y", "e.md"), "resolved\n", time.Hour)
	for range 2 {
		got, _ := memScan(t, dir, cache, mem)
		if m := slices.Sorted(slices.Values(got.Markers)); !slices.Equal(m, []string{"x/c.md"}) {
			t.Fatalf("after resolving y/e.md: marker files %v", m)
		}
	}
}

// A remembered outcome holds only under the rules it was found with:
// when the ignore rules change, the directories it remembers are walked
// again under the new rules (their listings still recalled, not listed),
// and going back to the old rules finds every file again.
func TestWatchedListingsOutcomeNeedsTheSameRules(t *testing.T) {
	dir := t.TempDir()
	mem := watchedTree(t, dir, "a.md", "x/b.md", "x/y/c.md", "x/y/d.txt")
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cache := NewStatCache()
	scan := func(rules Rules) (*Listing, int64) {
		t.Helper()
		before := dirsListed.Load()
		res, err := Scan(r, cache, rules, mem)
		if err != nil {
			t.Fatal(err)
		}
		return res, dirsListed.Load() - before
	}
	plain := Rules{}
	scan(plain)
	if res, listed := scan(plain); listed != 0 || len(res.Files) != 4 {
		t.Fatalf("warm: %d listed, %d files", listed, len(res.Files))
	}
	ign, err := NewIgnore([]string{"*.txt"}, false)
	if err != nil {
		t.Fatal(err)
	}
	res, listed := scan(Rules{Ignore: ign})
	if _, ok := res.Files["x/y/d.txt"]; ok || len(res.Files) != 3 || !slices.Equal(res.Ignored, []string{"x/y/d.txt"}) {
		t.Fatalf("under *.txt: files %v, ignored %v", slices.Sorted(maps.Keys(res.Files)), res.Ignored)
	}
	if listed != 0 || len(res.Content) != 0 {
		t.Fatalf("under *.txt: %d listed, %d read; want 0 and 0 (listings and stats recalled)", listed, len(res.Content))
	}
	if res, _ := scan(plain); len(res.Files) != 4 || len(res.Ignored) != 0 {
		t.Fatalf("back to no rules: files %v, ignored %v", slices.Sorted(maps.Keys(res.Files)), res.Ignored)
	}
}
