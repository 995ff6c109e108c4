//go:build !unix

package seaweed

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// lockFile takes an exclusive lock by creating path, waiting while another
// process holds it. A lock older than the build timeout is taken as stale.
func lockFile(path string) (unlock func(), err error) {
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if info, statErr := os.Stat(path); statErr == nil && time.Since(info.ModTime()) > buildTimeout {
			os.Remove(path)
			continue
		}
		time.Sleep(500 * time.Millisecond)
	}
}
