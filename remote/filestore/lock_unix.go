//go:build unix

package filestore

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f, waiting for it. flock locks belong
// to the open file description, so two opens of the lock file exclude each
// other within one process as well as across processes, and the kernel
// releases the lock when a holder dies.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// syncDir fsyncs a directory so the entries renamed into it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// readShared reads a whole file; renaming over it meanwhile is harmless here.
func readShared(path string) ([]byte, error) { return os.ReadFile(path) }
