package pstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/osfile"
)

// ErrLocked: the lock file is held by another process (TryLock only).
// The text predates this package and is kept as it was.
var ErrLocked = errors.New("server: directory is locked by another operation")

// Lock holds the cross-process lock of one visible directory: an
// exclusive lock on P/dirs/<hash>/lock (internal/osfile), released by the
// OS if the process dies, so a crashed holder never blocks the next call.
type Lock struct{ l *osfile.Lock }

// TryLock takes the lock file name without waiting: ErrLocked while
// another holds it.
func TryLock(name string) (*Lock, error) {
	l, err := osfile.TryAcquire(name, 0o600)
	if errors.Is(err, osfile.ErrLocked) {
		return nil, ErrLocked
	}
	if err != nil {
		return nil, err
	}
	return &Lock{l: l}, nil
}

// Lock waits for the directory's lock, polling so the wait honours ctx.
func (d Dir) Lock(ctx context.Context) (*Lock, error) {
	name := d.File("lock")
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil, err
	}
	wait := time.Millisecond
	for {
		l, err := TryLock(name)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrLocked) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		if wait < 20*time.Millisecond {
			wait *= 2
		}
	}
}

// Release releases the lock (nil: none held).
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	return l.l.Release()
}
