//go:build linux

package workdir

import (
	"io/fs"
	"syscall"
)

// sysStat extracts the change time, inode and device: together with size
// and mtime they detect an edit that kept size and mtime (touch -r, a copy
// preserving times, a rename over the file).
func sysStat(fi fs.FileInfo) (ctime int64, ino, dev uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano(), uint64(st.Ino), uint64(st.Dev)
	}
	return 0, 0, 0
}

const oNonblock = syscall.O_NONBLOCK
