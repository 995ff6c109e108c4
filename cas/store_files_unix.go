//go:build unix

package cas

import "syscall"

// openFileLimit is the process's soft limit on open files.
func openFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<40 { // unlimited, or nearly
		return 1 << 20
	}
	return l.Cur
}
