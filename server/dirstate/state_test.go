package dirstate

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

func testBaseline(gen uint64) *Baseline {
	return NewBaseline(gen, cas.Sum([]byte(fmt.Sprint("head ", gen))), map[string]cas.ID{
		"a.md":    cas.Sum([]byte("a")),
		"img.png": cas.Sum([]byte(fmt.Sprint("img ", gen))),
	})
}

// A long-lived engine's kept baseline stands in for P's file only while
// that file is the one it was kept from: a baseline another process
// recorded, one damaged in place, or one removed is read from P (or
// found missing) as a fresh process would, and the memory is dropped.
func TestKeptBaselineOnlyWhilePsFileIsTheSame(t *testing.T) {
	d := State{Dir: pstate.Dir{Path: t.TempDir()}, Mem: &Memory{}}
	if b, err := d.LoadBaseline(); b != nil || err != nil {
		t.Fatalf("a directory never pulled: %+v %v", b, err)
	}
	first := testBaseline(1)
	first.Ignored, first.IgnoredKnown = []plan.PathID{{Path: "img.png", ID: first.Files["img.png"]}}, true
	if err := d.SaveBaseline(first); err != nil {
		t.Fatal(err)
	}
	if first.Kept == nil || d.Mem.Base != first.Kept {
		t.Fatal("the baseline just saved is not the one kept")
	}
	got, err := d.LoadBaseline()
	if err != nil || got == nil || got.Kept != first.Kept || got.Generation != 1 || !got.IgnoredKnown || len(got.Ignored) != 1 {
		t.Fatalf("the kept baseline was not recalled with its ignored set: %+v %v", got, err)
	}
	if got == first {
		t.Fatal("recall handed out the kept value itself, not a fresh copy")
	}

	// Another process (no memory) records generation 2: a new file.
	other := d
	other.Mem = nil
	if err := other.SaveBaseline(testBaseline(2)); err != nil {
		t.Fatal(err)
	}
	got, err = d.LoadBaseline()
	if err != nil || got == nil || got.Generation != 2 || got.Kept == first.Kept || got.IgnoredKnown {
		t.Fatalf("another process's baseline: %+v %v", got, err)
	}
	if d.Mem.Base == nil || d.Mem.Base.Generation() != 2 {
		t.Fatal("the baseline read from P is not the one kept now")
	}

	// Damaged in place, its modification time put back.
	name := d.File("baseline")
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(name, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if b, err := d.LoadBaseline(); b != nil || !errors.Is(err, pstate.ErrCorrupt) {
		t.Fatalf("a baseline damaged in place: %+v %v", b, err)
	}
	if d.Mem.Base != nil {
		t.Fatal("a corrupt baseline left the memory in place")
	}

	// Saved again, then removed.
	if err := d.SaveBaseline(testBaseline(3)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if b, err := d.LoadBaseline(); b != nil || err != nil {
		t.Fatalf("a removed baseline: %+v %v", b, err)
	}
	if d.Mem.Base != nil {
		t.Fatal("a removed baseline left the memory in place")
	}
}

// Without a memory (a CLI process) every load reads P and nothing is kept.
func TestNoMemoryReadsP(t *testing.T) {
	var ms *Memories
	d := State{Dir: pstate.Dir{Path: t.TempDir()}, Mem: ms.Of("x")}
	if d.Mem != nil {
		t.Fatal("a nil Memories handed out a memory")
	}
	if err := d.SaveBaseline(testBaseline(1)); err != nil {
		t.Fatal(err)
	}
	b, err := d.LoadBaseline()
	if err != nil || b == nil || b.Generation != 1 || b.Kept != nil {
		t.Fatalf("%+v %v", b, err)
	}
	ms.Close() // a nil Memories closes as a no-op
}

// Memories holds one Memory per directory, the same on every call, and
// at most maxMemories of them.
func TestMemoriesBounded(t *testing.T) {
	ms := NewMemories()
	defer ms.Close()
	first := ms.Of("dir0")
	if ms.Of("dir0") != first {
		t.Fatal("two memories for one directory")
	}
	for i := 1; i <= maxMemories; i++ {
		ms.Of(fmt.Sprint("dir", i))
	}
	if n := len(ms.m); n != maxMemories {
		t.Fatalf("%d memories kept, want at most %d", n, maxMemories)
	}
}

// A baseline with unknown bases lists them; a nil one (never pulled) is
// exact and has none; WithUnknown of no paths is the baseline itself.
func TestBaselineUnknownBases(t *testing.T) {
	var none *Baseline
	if !none.Exact() || none.HasUnknown() || none.WithUnknown(nil) != nil {
		t.Fatal("no baseline must be exact, with no unknown base")
	}
	b := testBaseline(1)
	if b.WithUnknown(nil) != b {
		t.Fatal("WithUnknown of no paths made a new baseline")
	}
	u := b.WithUnknown([]string{"a.md"})
	if u.Exact() || !u.HasUnknown() || len(u.UnknownPaths()) != 1 || u.UnknownPaths()[0] != "a.md" {
		t.Fatalf("unknown at a.md: %+v", u.UnknownPaths())
	}
	if !b.Exact() || b.HasUnknown() {
		t.Fatal("WithUnknown changed the baseline it started from")
	}
}

// IgnoredAfter derives the next ignored set from a known one: paths
// changed are replaced, removed ones dropped, new matching ones added.
func TestIgnoredAfter(t *testing.T) {
	b := testBaseline(1)
	if _, ok := b.IgnoredAfter(nil, nil); ok {
		t.Fatal("an unknown ignored set was derived")
	}
	b.LearnIgnored([]plan.PathID{{Path: "img.png", ID: b.Files["img.png"]}, {Path: "old.png", ID: cas.Sum([]byte("o"))}})
	newImg := cas.Sum([]byte("img 2"))
	list, ok := b.IgnoredAfter(map[string]cas.ID{"img.png": newImg, "old.png": {}, "new.png": cas.Sum([]byte("n")), "b.md": cas.Sum([]byte("b"))},
		func(p string) bool { return len(p) > 4 && p[len(p)-4:] == ".png" })
	got := map[string]cas.ID{}
	for _, e := range list {
		got[e.Path] = e.ID
	}
	if !ok || len(got) != 2 || got["img.png"] != newImg || got["new.png"] != cas.Sum([]byte("n")) {
		t.Fatalf("ignored after the changes: %+v %v", list, ok)
	}
}
