package dirstate

import (
	"os"
	"testing"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// The streak is rewritten in place on every commit (no file created), the
// zero Streak included; a torn one reads as the zero Streak (one LIST),
// and the older form, the two numbers alone, is read.
func TestStreakRecord(t *testing.T) {
	d := State{Dir: pstate.Dir{Path: t.TempDir()}}
	path := d.File(streakFile)
	d.SaveStreak(publish.Streak{Generation: 9, Skipped: 1})
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []publish.Streak{{Generation: 1300, Skipped: publish.MaxSkips}, {}, {Generation: 1302, Skipped: 0}} {
		d.SaveStreak(st)
		if got := d.LoadStreak(); got != st {
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
	if got := d.LoadStreak(); got != (publish.Streak{}) {
		t.Fatalf("torn record %q read as %+v", torn, got)
	}
	if err := os.WriteFile(path, []byte("77 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := d.LoadStreak(); got != (publish.Streak{Generation: 77, Skipped: 3}) {
		t.Fatalf("older record read as %+v", got)
	}
	if err := os.WriteFile(path, []byte("77 9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := d.LoadStreak(); got != (publish.Streak{}) {
		t.Fatalf("a count past MaxSkips read as %+v", got)
	}
}
