//go:build !unix && !windows

package filestore

import (
	"fmt"
	"os"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Platforms without a file lock (js, wasip1, plan9) cannot give the file
// store's cross-process guarantee, so every write is refused rather than
// silently unsafe.
func lockFile(f *os.File) error {
	return fmt.Errorf("%w: no file lock on this platform", remote.ErrIncompatible)
}

func unlockFile(f *os.File) error { return nil }

func syncDir(dir string) error { return nil }

// readShared reads a whole file; renaming over it meanwhile is harmless here.
func readShared(path string) ([]byte, error) { return os.ReadFile(path) }
