//go:build unix

package cas

import (
	"os"
	"syscall"
)

// dirIdentity returns the device and inode of a directory's FileInfo; an
// inode of 0 means unknown, and a merged index is then never trusted
// without listing the directory.
func dirIdentity(fi os.FileInfo) (dev, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Dev), uint64(st.Ino) // their types differ between systems
}
