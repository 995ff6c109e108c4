//go:build windows

package osfile

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// The lock is on the first byte of the file, through the handle: like
// flock, it belongs to the open file and dies with the process.
func lock(f *os.File, wait bool) error {
	flags := uint32(windows.LOCKFILE_EXCLUSIVE_LOCK)
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	return lockFileEx(f, flags)
}

func lockShared(f *os.File) error { return lockFileEx(f, 0) }

func lockFileEx(f *os.File, flags uint32) error {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return ErrLocked
	default:
		return &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
	}
}

func unlock(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// SyncDir is a no-op: windows cannot open a directory for FlushFileBuffers
// through os.Open, and NTFS commits a rename with its journal.
func SyncDir(dir string) error { return nil }

// SyncOpenDir closes d; see SyncDir.
func SyncOpenDir(d *os.File) error { return d.Close() }
