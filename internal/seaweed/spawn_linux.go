//go:build linux

package seaweed

import (
	"os/exec"
	"runtime"
	"syscall"
)

// The kernel sends the parent-death signal when the *thread* that forked the
// child exits, and the Go runtime may retire threads. So every weed process
// is forked from one goroutine locked to an OS thread that never exits:
// SIGKILL then reaches weed exactly when the test binary itself dies,
// however it dies.
var spawnRequests = make(chan spawnRequest)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func init() {
	go func() {
		runtime.LockOSThread() // never unlocked: this thread lives as long as the process
		for req := range spawnRequests {
			req.done <- req.cmd.Start()
		}
	}()
}

func startChild(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	done := make(chan error, 1)
	spawnRequests <- spawnRequest{cmd, done}
	return <-done
}

// startBuildChild starts a go command from the same thread, with the
// parent-death signal but in our process group, so ^C at a terminal reaches
// it (and its compilers) as it reaches us.
func startBuildChild(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	done := make(chan error, 1)
	spawnRequests <- spawnRequest{cmd, done}
	return <-done
}
