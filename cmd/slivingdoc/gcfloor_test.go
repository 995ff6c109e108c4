package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// The heap goal floorPercent gives reaches live + floor, from either of
// the runtime's two goals, and a percentage one lower does not.
func TestFloorPercentReachesTheFloor(t *testing.T) {
	goal := func(live uint64, p int) uint64 {
		return max(live*uint64(100+p)/100, defaultHeapMinimum*uint64(p)/100)
	}
	const floor = 16 << 20
	for _, live := range []uint64{0, 300 << 10, 1 << 20, 4 << 20, 8 << 20, 16 << 20, 100 << 20, 1 << 30} {
		p := floorPercent(live, floor)
		// Integer division may leave the goal a percent's worth short.
		slack := max(live, defaultHeapMinimum) / 100
		if g := goal(live, p); g+slack < live+floor {
			t.Errorf("live %d: GOGC %d gives a goal of %d, below %d", live, p, g, live+floor)
		}
		if p >= 2 && goal(live, p-2) >= live+floor {
			t.Errorf("live %d: GOGC %d is more than the floor needs", live, p)
		}
	}
}

// A serve process collects no more than once per floor of garbage while
// its live heap is small, and GOGC=off from the user stays off.
func TestCollectAboveSpacesCollections(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	stop := collectAbove(64 << 20)
	gcs := numGC()
	garbage(32 << 20) // with GOGC=100 and a small live heap this collects several times
	if n := numGC() - gcs; n > 1 {
		t.Fatalf("%d collections in 32 MiB of garbage with a floor of 64 MiB", n)
	}
	stop()
	if p, _ := gcSettings(); p != 100 {
		t.Fatalf("after stop: GOGC %d, want the user's 100", p)
	}

	debug.SetGCPercent(-1)
	collectAbove(64 << 20)()
	if p, _ := gcSettings(); p != -1 {
		t.Fatalf("GOGC %d; want the user's off", p)
	}
}
