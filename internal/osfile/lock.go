package osfile

import (
	"errors"
	"os"
)

// ErrLocked is returned by TryAcquire when another holder has the lock.
var ErrLocked = errors.New("osfile: the file is locked by another holder")

// Lock is a held lock; Release gives it up.
type Lock struct{ f *os.File }

// Acquire opens path (creating it with perm) and waits for an exclusive
// lock on it.
func Acquire(path string, perm os.FileMode) (*Lock, error) { return acquire(path, perm, true) }

// TryAcquire is Acquire without the wait: ErrLocked while another holder
// has the lock.
func TryAcquire(path string, perm os.FileMode) (*Lock, error) { return acquire(path, perm, false) }

// AcquireExisting is Acquire on a file that exists already: it never
// creates one, so a lock taken late (by a thread that outlived its
// caller) cannot bring back a file whose directory was cleaned meanwhile.
func AcquireExisting(path string) (*Lock, error) {
	return openLocked(path, os.O_RDWR, 0, func(f *os.File) error { return lock(f, true) })
}

// AcquireShared opens the existing file path (it never creates one, as
// AcquireExisting) and waits for a shared lock on it: any number of
// shared holders at once, none while an exclusive holder has it. Waiters
// for a shared lock all get it when the exclusive holder lets go, which
// makes the pair a broadcast.
func AcquireShared(path string) (*Lock, error) {
	return openLocked(path, os.O_RDONLY, 0, lockShared)
}

func acquire(path string, perm os.FileMode, wait bool) (*Lock, error) {
	return openLocked(path, os.O_RDWR|os.O_CREATE, perm, func(f *os.File) error { return lock(f, wait) })
}

// openLocked opens path with flag (and perm, when it creates it) and
// locks it with lockf; on failure the file is closed again.
func openLocked(path string, flag int, perm os.FileMode, lockf func(*os.File) error) (*Lock, error) {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if err := lockf(f); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}

// Release unlocks and closes the lock file. Releasing nil or twice is a
// no-op.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = unlock(l.f) // closing drops the lock anyway
	err := l.f.Close()
	l.f = nil
	return err
}
