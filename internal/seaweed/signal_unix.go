//go:build unix

package seaweed

import (
	"errors"
	"os"
	"syscall"
)

func terminate(p *os.Process) error {
	_ = p.Signal(syscall.SIGCONT) // a paused server would keep SIGTERM pending forever
	return p.Signal(syscall.SIGTERM)
}

func pause(p *os.Process) error  { return p.Signal(syscall.SIGSTOP) }
func resume(p *os.Process) error { return p.Signal(syscall.SIGCONT) }

// processAlive reports whether pid names a live process (EPERM: alive, not ours).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
