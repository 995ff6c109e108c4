//go:build unix

package workdir

import (
	"syscall"
	"testing"
)

// makeFIFO creates a named pipe (a special file the scan must refuse
// without blocking on it).
func makeFIFO(t *testing.T, p string) bool {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return true
}
