package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// errLocked: the lock file is held by another process (tryLock only).
var errLocked = errors.New("server: directory is locked by another operation")

// lockFile holds the cross-process lock of one visible directory: an
// advisory lock on P/dirs/<hash>/lock, released by the OS if the process
// dies, so a crashed holder never blocks the next call.
type lockFile struct{ f *os.File }

// acquireLock waits for the lock, polling so the wait honours ctx.
func acquireLock(ctx context.Context, name string) (*lockFile, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil, err
	}
	wait := time.Millisecond
	for {
		l, err := tryLock(name)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, errLocked) {
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

func (l *lockFile) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	unlockFile(l.f)
	err := l.f.Close()
	l.f = nil
	return err
}
