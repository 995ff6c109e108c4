//go:build linux && !amd64 && !arm64

package workdir

import "golang.org/x/sys/unix"

// fstatatZ: through unix.Fstatat, whose system call and Stat_t differ
// by architecture here.
func fstatatZ(fd int, name []byte, st *unix.Stat_t) error { return fstatatCopy(fd, name, st) }
