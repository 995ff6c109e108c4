//go:build linux

package osfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps a and b atomically (renameat2 RENAME_EXCHANGE).
func exchange(a, b string) error {
	for {
		err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
			// A file system (NFS, some FUSE) or a kernel without it.
			return errors.ErrUnsupported
		default:
			return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
		}
	}
}
