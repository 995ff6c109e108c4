//go:build windows

package filestore

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// The standard library exposes no file locking on windows, so LockFileEx
// is called through kernel32 (syscall only, no new dependency). Like flock,
// the lock belongs to the handle and is released when the process dies.
var (
	kernel32         = syscall.NewLazyDLL("kernel32.dll")
	procLockFileEx   = kernel32.NewProc("LockFileEx")
	procUnlockFileEx = kernel32.NewProc("UnlockFileEx")
)

const lockfileExclusiveLock = 0x2

// lockFile takes an exclusive lock on the first byte of f, waiting for it.
func lockFile(f *os.File) error {
	var ol syscall.Overlapped
	r, _, err := procLockFileEx.Call(f.Fd(), lockfileExclusiveLock, 0, 1, 0, uintptr(unsafe.Pointer(&ol)))
	if r == 0 {
		return err
	}
	return nil
}

func unlockFile(f *os.File) error {
	var ol syscall.Overlapped
	r, _, err := procUnlockFileEx.Call(f.Fd(), 0, 1, 0, uintptr(unsafe.Pointer(&ol)))
	if r == 0 {
		return err
	}
	return nil
}

// syncDir is a no-op: windows cannot open a directory for FlushFileBuffers
// through os.Open, and NTFS commits a MoveFileEx rename with its journal.
func syncDir(dir string) error { return nil }

// readShared reads a whole file opened with FILE_SHARE_DELETE: os.Open does
// not share delete access, and a reader holding the file would make a
// writer's rename over it fail (a spurious "access denied").
func readShared(path string) ([]byte, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ,
		syscall.FILE_SHARE_READ|syscall.FILE_SHARE_WRITE|syscall.FILE_SHARE_DELETE,
		nil, syscall.OPEN_EXISTING, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.New(uintptr(h), path)
	defer f.Close()
	return io.ReadAll(f)
}
