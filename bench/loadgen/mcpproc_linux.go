package main

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuClock reads the CPU time process pid has used: the sum of its
// threads' run time from /proc/<pid>/task/<tid>/schedstat (nanoseconds),
// or, where the kernel has no schedstat, utime+stime from /proc/<pid>/stat
// (ticks of USER_HZ, 100 on Linux); 0 when the process is gone. It is read
// twice per tool call, so it keeps each thread's file open and reads it
// again from offset 0 (the kernel regenerates it): opening, reading and
// closing a file per thread each time was 5% of both cores in the 10-writer
// serve rows, taken from the processes measured.
type cpuClock struct {
	pid   int
	tasks map[string]*os.File // tid → its open schedstat
	buf   [128]byte
}

func newCPUClock(pid int) *cpuClock { return &cpuClock{pid: pid, tasks: map[string]*os.File{}} }

func (c *cpuClock) read() time.Duration {
	base := "/proc/" + strconv.Itoa(c.pid)
	// The thread list is read each time (one directory read) to take in
	// threads started since; a thread that ended drops out of the sum, as
	// it does from the kernel's files.
	if d, err := os.Open(base + "/task"); err == nil {
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, tid := range names {
			if _, ok := c.tasks[tid]; !ok {
				if f, err := os.Open(base + "/task/" + tid + "/schedstat"); err == nil {
					c.tasks[tid] = f
				}
			}
		}
	}
	var ns int64
	for tid, f := range c.tasks {
		n, err := f.ReadAt(c.buf[:], 0)
		if n == 0 && err != nil {
			f.Close()
			delete(c.tasks, tid)
			continue
		}
		field, _, _ := strings.Cut(string(c.buf[:n]), " ")
		v, _ := strconv.ParseInt(field, 10, 64)
		ns += v
	}
	if ns > 0 {
		return time.Duration(ns)
	}
	return statCPU(base)
}

// close closes the threads' files.
func (c *cpuClock) close() {
	for tid, f := range c.tasks {
		f.Close()
		delete(c.tasks, tid)
	}
}

// statCPU is utime+stime of /proc/<pid>/stat (base).
func statCPU(base string) time.Duration {
	data, err := os.ReadFile(base + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are
	// the stat file's 14th and 15th fields.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * (time.Second / 100)
}

// procPeakRSS is process pid's peak resident set (VmHWM) in KiB.
func procPeakRSS(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
