//go:build unix

package main

import (
	"reflect"
	"testing"
)

// A seed replays the same faults: kinds, targets, gaps and lengths.
func TestScheduleReplaysBySeed(t *testing.T) {
	a := schedule(42, 1, allKinds, 200, 4, 0)
	b := schedule(42, 1, allKinds, 200, 4, 0)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed drew two different schedules")
	}
	if c := schedule(43, 1, allKinds, 200, 4, 0); reflect.DeepEqual(a, c) {
		t.Fatal("two seeds drew the same schedule")
	}
	if c := schedule(42, 2, allKinds, 200, 4, 0); reflect.DeepEqual(a, c) {
		t.Fatal("two stores of one seed drew the same schedule")
	}
}

// The first events cover every kind once, so a time-capped run still
// fires each; the rest only use the store's kinds; disk faults hit the
// writer whose private root is on the small disk.
func TestScheduleCoversEveryKind(t *testing.T) {
	kinds := []faultKind{faultKill, faultDisk, faultCorrupt}
	for seed := uint64(1); seed <= 50; seed++ {
		evs := schedule(seed, 1, kinds, 100, 3, 2)
		if len(evs) != 100 {
			t.Fatalf("seed %d: %d events, want 100", seed, len(evs))
		}
		first := map[faultKind]bool{}
		for _, ev := range evs[:len(kinds)] {
			first[ev.Kind] = true
		}
		if len(first) != len(kinds) {
			t.Fatalf("seed %d: the first %d events cover %v, want every kind", seed, len(kinds), first)
		}
		for _, ev := range evs {
			allowed := false
			for _, k := range kinds {
				allowed = allowed || ev.Kind == k
			}
			switch {
			case !allowed:
				t.Fatalf("seed %d round %d: kind %s is not one of the store's", seed, ev.Round, ev.Kind)
			case ev.Kind == faultDisk && ev.Target != 2:
				t.Fatalf("seed %d round %d: disk-full aimed at writer %d, want the disk writer 2", seed, ev.Round, ev.Target)
			case ev.Target < 0 || ev.Target >= 3:
				t.Fatalf("seed %d round %d: target %d out of range", seed, ev.Round, ev.Target)
			case ev.Gap <= 0:
				t.Fatalf("seed %d round %d: no gap before the fault", seed, ev.Round)
			}
		}
	}
}
