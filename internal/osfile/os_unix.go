//go:build unix

package osfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
)

func lock(f *os.File, wait bool) error {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	return flock(f, how)
}

func lockShared(f *os.File) error { return flock(f, unix.LOCK_SH) }

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return ErrLocked
		default:
			return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
}

func unlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// SyncDir fsyncs dir so the entries renamed into it are durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return SyncOpenDir(d)
}

// SyncOpenDir fsyncs and closes the open directory d (one opened through
// an os.Root, say).
func SyncOpenDir(d *os.File) error {
	crashpoint.Hit(cpSyncDir, d.Name())
	err := d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
