package commit

import (
	"fmt"
	"testing"
)

// The sweep rule: a multiple of a period that is at least twice the
// window and grows with the history, so sweeps get rarer as it grows.
func TestSweepDueRule(t *testing.T) {
	var due []uint64
	for g := uint64(1); g <= 5000; g++ {
		if sweepDue(g, 0, 256) {
			due = append(due, g)
		}
	}
	want := []uint64{512, 1024, 1536, 2048, 3072, 4096}
	if fmt.Sprint(due) != fmt.Sprint(want) {
		t.Fatalf("window 256: sweeps at %v, want %v", due, want)
	}
	due = due[:0]
	for g := uint64(1); g <= 40; g++ {
		if sweepDue(g, 0, 4) {
			due = append(due, g)
		}
	}
	if fmt.Sprint(due) != "[8 16 24 32]" {
		t.Fatalf("window 4: sweeps at %v", due)
	}
	// Sweeps run above the floor only, counted from it.
	if sweepDue(8, 8, 4) || !sweepDue(16, 8, 4) {
		t.Fatal("a floor of 8 does not shift the rule")
	}
	// Over a long history a sweep is rare: 2^20 generations, K + M = 256.
	n := 0
	for g := uint64(1); g <= 1<<20; g++ {
		if sweepDue(g, 0, 256) {
			n++
		}
	}
	if n > 40 {
		t.Fatalf("%d sweeps over 2^20 generations", n)
	}
}
