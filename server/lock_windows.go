//go:build windows

package server

import (
	"errors"
	"os"
	"syscall"
)

// Windows has no flock in the standard library; a handle opened with no
// sharing is exclusive in the same way (others get a sharing violation)
// and is released when the process exits.
const errorSharingViolation syscall.Errno = 32

func tryLock(name string) (*lockFile, error) {
	p, err := syscall.UTF16PtrFromString(name)
	if err != nil {
		return nil, err
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil,
		syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		if errors.Is(err, errorSharingViolation) {
			return nil, errLocked
		}
		return nil, err
	}
	return &lockFile{f: os.NewFile(uintptr(h), name)}, nil
}

func unlockFile(*os.File) {}

// syncDir is a no-op: Windows cannot open a directory for flushing, and
// NTFS journals renames.
func syncDir(string) error { return nil }
