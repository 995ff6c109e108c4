package main

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// serveHeapFloor is what a serve process may allocate between two
// collections at least. A commit of serve allocates about 2 MiB and leaves
// about 1 MiB live, so under the runtime's default (a collection each time
// the heap doubles, from 4 MiB) serve collected about once per commit, and
// the collector's fixed costs (its mark workers, the globals and stacks
// scanned, the sweep) were 6–7% of the process's CPU in the fleet rows
// (docs/benchmarks.md, "Where a serve process's CPU goes"). 16 MiB made
// that one collection in 15–30 commits there, for at most 16 MiB more of
// memory per process.
const serveHeapFloor = 16 << 20

// defaultHeapMinimum is the runtime's heap goal when the live heap is
// small, at GOGC=100; it scales with GOGC (runtime's heapMinimum).
const defaultHeapMinimum = 4 << 20

// collectAbove keeps each collection's heap goal at least floor above
// the heap the last collection left live (read when the cleanup below
// runs, soon after it), and never below what the user's
// GOGC gives: after every collection it sets GOGC to the least percentage
// that reaches live + floor, with the user's as the lowest. A memory
// limit (GOMEMLIMIT) still bounds the heap as before, and GOGC=off from
// the user stays off. It is re-tuned by the cleanup of a sentinel object
// that only a collection frees, armed again each time. stop ends the
// tuning and gives GOGC back its setting (tests; serve tunes until it
// exits).
func collectAbove(floor uint64) (stop func()) {
	user := debug.SetGCPercent(-1)
	debug.SetGCPercent(user)
	if user < 0 {
		return func() {}
	}
	var mu sync.Mutex // a tuning and stop, one at a time
	stopped := false
	var tune func()
	tune = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		// Read right after a collection's sweep, the heap is what it left
		// live and little more. (ReadMemStats rather than runtime/metrics,
		// whose package initialisation every command would pay.)
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		debug.SetGCPercent(max(user, floorPercent(m.HeapAlloc, floor)))
		runtime.AddCleanup(new(gcSentinel), func(struct{}) { tune() }, struct{}{})
	}
	tune()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		debug.SetGCPercent(user)
	}
}

// floorPercent is the least GOGC whose heap goal, after a collection that
// left live bytes live, is at least live + floor: the goal is the larger
// of live × (1 + GOGC/100) and defaultHeapMinimum × GOGC/100.
func floorPercent(live, floor uint64) int {
	byMinimum := (live + floor) * 100 / defaultHeapMinimum
	if live == 0 {
		return int(byMinimum)
	}
	byGrowth := floor * 100 / live
	return int(min(byGrowth, byMinimum))
}
