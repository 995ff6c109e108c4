//go:build unix

package fleetsim

import (
	"syscall"
	"time"
)

// cpuTime is this process's user + system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// raiseFileLimit lifts this process's open-file limit towards want (each
// engine's object cache keeps up to 64 pack files open, so 1,000 engines
// in one process need more than a default limit) and returns the limit
// in force. Raising the hard limit needs privilege; without it the soft
// limit goes as high as the hard one (the Go runtime already does that).
func raiseFileLimit(want uint64) uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	if l.Cur >= want {
		return l.Cur
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: max(want, l.Max)}); err != nil {
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: l.Max, Max: l.Max})
	}
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return l.Cur
}
