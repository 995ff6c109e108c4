//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// usage returns a finished child's CPU time and maximum RSS in KiB.
func usage(ps *os.ProcessState) (time.Duration, int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime() + ps.SystemTime(), 0
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS == "darwin" {
		rss /= 1024 // bytes there, KiB on Linux and the BSDs
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rss
}
