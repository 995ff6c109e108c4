//go:build linux && (amd64 || arm64)

package workdir

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatatZ passes a NUL-terminated name straight from the directory
// record to the system call: unix.Fstatat copies every name into a new
// NUL-terminated buffer first, an allocation per file of L on every scan.
func fstatatZ(fd int, name []byte, st *unix.Stat_t) error {
	if len(name) == 0 || name[len(name)-1] != 0 {
		return fstatatCopy(fd, name, st)
	}
	_, _, e := unix.Syscall6(sysFstatat, uintptr(fd), uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
