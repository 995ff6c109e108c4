//go:build !unix && !windows

package osfile

import (
	"errors"
	"fmt"
	"os"
)

// Platforms without a file lock (js, wasip1, plan9): a caller that needs
// the cross-process guarantee refuses rather than run silently unsafe.
func lock(f *os.File, wait bool) error {
	return fmt.Errorf("%w: no file lock on this platform", errors.ErrUnsupported)
}

func lockShared(f *os.File) error { return lock(f, true) }

func unlock(f *os.File) error { return nil }

// SyncDir is a no-op here.
func SyncDir(dir string) error { return nil }

// SyncOpenDir closes d.
func SyncOpenDir(d *os.File) error { return d.Close() }
