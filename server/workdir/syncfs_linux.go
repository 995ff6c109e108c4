//go:build linux

package workdir

import (
	"os"

	"golang.org/x/sys/unix"
)

// CanSyncFS: Linux flushes a whole file system in one call (syncfs).
const CanSyncFS = true

// SyncFS makes every file written under r durable, in one journal commit
// rather than one per file.
func SyncFS(r *os.Root) error {
	d, err := r.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	sc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := sc.Control(func(fd uintptr) { serr = unix.Syncfs(int(fd)) }); err != nil {
		return err
	}
	return serr
}
