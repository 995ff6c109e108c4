package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/osfile"
)

// errLocked: the lock file is held by another process (tryLock only).
var errLocked = errors.New("server: directory is locked by another operation")

// lockFile holds the cross-process lock of one visible directory: an
// exclusive lock on P/dirs/<hash>/lock (internal/osfile), released by the
// OS if the process dies, so a crashed holder never blocks the next call.
type lockFile struct{ l *osfile.Lock }

// tryLock takes the lock without waiting: errLocked while another holds it.
func tryLock(name string) (*lockFile, error) {
	l, err := osfile.TryAcquire(name, 0o600)
	if errors.Is(err, osfile.ErrLocked) {
		return nil, errLocked
	}
	if err != nil {
		return nil, err
	}
	return &lockFile{l: l}, nil
}

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
	if l == nil {
		return nil
	}
	return l.l.Release()
}
