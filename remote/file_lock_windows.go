//go:build windows

package remote

import (
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
