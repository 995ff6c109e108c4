package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// processCPU is this process's CPU (user + system) by getrusage: an
// independent measure of what the clock reads.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The clock counts the CPU a process burns between two reads (here this
// test's own), as getrusage does. The spin lasts until the process has
// burnt 60 ms, not for 60 ms of wall time: on a loaded machine (a whole
// `go test ./...` on 2 cores) a thread gets a share of the wall time.
func TestCPUClockCountsBurntCPU(t *testing.T) {
	c := newCPUClock(os.Getpid())
	defer c.close()
	before := c.read()
	if before <= 0 {
		t.Fatalf("first read: %v", before)
	}
	ru0 := processCPU(t)
	t0 := time.Now()
	x := 0
	for processCPU(t)-ru0 < 60*time.Millisecond && time.Since(t0) < 10*time.Second {
		for range 10000 {
			x++
		}
	}
	got := c.read() - before
	burnt := processCPU(t) - ru0
	if burnt < 60*time.Millisecond {
		t.Skipf("burnt only %v of CPU in %v of wall time: the machine is too loaded to tell", burnt, time.Since(t0))
	}
	if got < burnt*3/4 || got > burnt+50*time.Millisecond {
		t.Fatalf("burnt %v by getrusage (%d loops), the clock says %v", burnt, x, got)
	}
	if len(c.tasks) == 0 {
		t.Fatal("no thread files kept open")
	}
}

// A serve row's writers are its processes' whole CPU, read by the clock:
// the calls' CPU the actors sum (passed to stop) is inside it, and is not
// added again. Here the "serve process" is this test's own, which burns
// nothing like an hour between the reads.
func TestBudgetServeWritersNotCountedTwice(t *testing.T) {
	c := startBudget([]int{os.Getpid()}, 0)
	callsCPU := time.Hour
	b := c.stop(callsCPU)
	if b.Writers >= callsCPU {
		t.Fatalf("writers %v: the calls' %v were added to the processes' own CPU", b.Writers, callsCPU)
	}
	if cli := startBudget(nil, 0).stop(callsCPU); cli.Writers != callsCPU {
		t.Fatalf("a CLI row's writers %v, want the processes' %v", cli.Writers, callsCPU)
	}
}
