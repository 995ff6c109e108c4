//go:build unix

package seaweed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func terminate(p *os.Process) error {
	_ = p.Signal(syscall.SIGCONT) // a paused server would keep SIGTERM pending forever
	return p.Signal(syscall.SIGTERM)
}

// pause stops p and, where /proc shows thread states, returns only once
// every thread of p is stopped: kill(2) returns before a thread running on
// another CPU has stopped, and a request answered in that window made
// TestKillRestartPauseResume fail under load.
func pause(p *os.Process) error {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		stopped, known := allThreadsStopped(p.Pid)
		if stopped || !known {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d: not every thread stopped within 5 s of SIGSTOP", p.Pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// allThreadsStopped reads the state field of /proc/<pid>/task/*/stat;
// known is false where there is no such file (not Linux).
func allThreadsStopped(pid int) (stopped, known bool) {
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if len(stats) == 0 {
		return false, false
	}
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			return false, true // a thread that exited meanwhile: look again
		}
		// The state follows the command name, which is in parentheses.
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 || i+2 >= len(data) {
			return false, false
		}
		if st := data[i+2]; st != 'T' && st != 't' {
			return false, true
		}
	}
	return true, true
}
func resume(p *os.Process) error { return p.Signal(syscall.SIGCONT) }

// processAlive reports whether pid names a live process (EPERM: alive, not ours).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
