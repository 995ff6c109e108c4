package main

import (
	"os"
	"testing"
	"time"
)

// The clock counts the CPU a process burns between two reads (here this
// test's own, on one thread), and no more than the wall time allows on
// the threads that ran.
func TestCPUClockCountsBurntCPU(t *testing.T) {
	c := newCPUClock(os.Getpid())
	defer c.close()
	before := c.read()
	if before <= 0 {
		t.Fatalf("first read: %v", before)
	}
	t0 := time.Now()
	x := 0
	for time.Since(t0) < 60*time.Millisecond {
		x++
	}
	wall := time.Since(t0)
	got := c.read() - before
	if got < 30*time.Millisecond || got > wall+200*time.Millisecond {
		t.Fatalf("spun for %v (%d loops), the clock says %v", wall, x, got)
	}
	if len(c.tasks) == 0 {
		t.Fatal("no thread files kept open")
	}
}
