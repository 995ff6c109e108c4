//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package workdir

import (
	"io/fs"
	"syscall"
)

// sysStat: see stat_linux.go.
func sysStat(fi fs.FileInfo) (ctime int64, ino, dev uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano(), uint64(st.Ino), uint64(st.Dev)
	}
	return 0, 0, 0
}

const oNonblock = syscall.O_NONBLOCK
