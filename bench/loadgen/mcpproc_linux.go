package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// procCPU is the CPU time process pid has used: the sum of its threads'
// run time from /proc/<pid>/task/*/schedstat (nanoseconds), or, where the
// kernel has no schedstat, utime+stime from /proc/<pid>/stat (ticks of
// USER_HZ, 100 on Linux). 0 when the process is gone.
func procCPU(pid int) time.Duration {
	base := "/proc/" + strconv.Itoa(pid)
	tasks, _ := filepath.Glob(base + "/task/*/schedstat")
	var ns int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(data))
		if len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			ns += v
		}
	}
	if ns > 0 {
		return time.Duration(ns)
	}
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
