package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// The highest generation seen is kept in one file rewritten in place, and a
// torn record never makes a store look regressed: it reads as no memory.
func TestHighestGenerationRecord(t *testing.T) {
	dir := t.TempDir()
	g := newGenerationMemory(dir, nil)
	for _, v := range []uint64{9, 10, 1300} {
		g.highest = v
		g.record()
		if got := g.readFile(); got != v {
			t.Fatalf("recorded %d, read %d", v, got)
		}
	}
	path := filepath.Join(dir, "highest")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	g.highest = 1301
	g.record()
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Fatalf("the record was replaced, not rewritten in place (%v)", err)
	}
	// Half of 1399 written over 1301: the digits alone would say 1391.
	data, _ := os.ReadFile(path)
	torn := append([]byte(nil), data...)
	copy(torn[:19], pstate.Seal("00000000000000001399")[:19])
	if err := os.WriteFile(path, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := g.readFile(); got != 0 {
		t.Fatalf("torn record %q read as %d, want none", torn, got)
	}
	// A record an older binary wrote (by replacement) is read.
	if err := os.WriteFile(path, []byte("77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := g.readFile(); got != 77 {
		t.Fatalf("older record read as %d, want 77", got)
	}
}

// The streak is rewritten in place on every commit (no file created), the
// zero Streak included; a torn one reads as the zero Streak (one LIST),
// and the older form, the two numbers alone, is read.
func TestStreakRecord(t *testing.T) {
	d := dirState{path: t.TempDir()}
	path := d.file(streakFile)
	d.saveStreak(publish.Streak{Generation: 9, Skipped: 1})
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []publish.Streak{{Generation: 1300, Skipped: publish.MaxSkips}, {}, {Generation: 1302, Skipped: 0}} {
		d.saveStreak(st)
		if got := d.loadStreak(); got != st {
			t.Fatalf("saved %+v, loaded %+v", st, got)
		}
		if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
			t.Fatalf("saving %+v replaced the record instead of rewriting it in place (%v)", st, err)
		}
	}
	// 1399 half written over 1302: the digits alone would say 1392.
	data, _ := os.ReadFile(path)
	torn := append([]byte(nil), data...)
	copy(torn[:19], pstate.Seal("00000000000000001399", "0")[:19])
	if err := os.WriteFile(path, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := d.loadStreak(); got != (publish.Streak{}) {
		t.Fatalf("torn record %q read as %+v", torn, got)
	}
	if err := os.WriteFile(path, []byte("77 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := d.loadStreak(); got != (publish.Streak{Generation: 77, Skipped: 3}) {
		t.Fatalf("older record read as %+v", got)
	}
	if err := os.WriteFile(path, []byte("77 9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := d.loadStreak(); got != (publish.Streak{}) {
		t.Fatalf("a count past MaxSkips read as %+v", got)
	}
}
