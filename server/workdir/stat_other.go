//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package workdir

import "io/fs"

// sysStat: no portable change time or inode here; size and mtime (and the
// racy-timestamp guard) still decide.
func sysStat(fs.FileInfo) (ctime int64, ino, dev uint64) { return 0, 0, 0 }

const oNonblock = 0
