package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// gcSettings reads GOGC and GOMEMLIMIT as the runtime applies them, without
// changing them (debug.SetGCPercent and SetMemoryLimit would).
func gcSettings() (percent int64, limit uint64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), s[1].Value.Uint64()
}

func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// goMemory is what the memory limit is compared with: the Go runtime's
// mapped memory less what it gave back to the OS.
func goMemory() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.Sys - m.HeapReleased)
}

var sink []byte

// garbage allocates n bytes that die at once.
func garbage(n int) {
	for ; n > 0; n -= 64 << 10 {
		sink = make([]byte, 64<<10)
	}
	sink = nil
}

// A one-shot command runs without the collector below its bound, and gets
// the collector back, with the user's settings, once it reaches it: the
// bound is a memory promise, not only an optimisation.
func TestCollectLateRestoresTheCollectorAtTheBound(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	runtime.GC()

	bound := goMemory() + 64<<20
	collectLate(bound)
	if p, l := gcSettings(); p != -1 || l != uint64(bound) {
		t.Fatalf("after collectLate: GOGC %d, limit %d; want off, %d", p, l, bound)
	}
	gcs := numGC()
	garbage(16 << 20) // far below the bound; with GOGC=150 this collects
	if n := numGC(); n != gcs {
		t.Fatalf("%d collections below the bound", n-gcs)
	}

	deadline := time.Now().Add(10 * time.Second)
	for {
		garbage(16 << 20)
		if p, l := gcSettings(); p == 150 && l == math.MaxInt64 {
			break
		}
		if time.Now().After(deadline) {
			p, l := gcSettings()
			t.Fatalf("past the bound (%d collections): GOGC %d, limit %d; want 150 and no limit", numGC()-gcs, p, l)
		}
	}
}

// GOGC=off from the user stays off, with the user's limit.
func TestCollectLateKeepsTheUsersCollectorOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
	collectLate(64 << 20)
	if p, l := gcSettings(); p != -1 || l != 1<<40 {
		t.Fatalf("GOGC %d, limit %d; want off, %d", p, l, 1<<40)
	}
}
