//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// readProc asks ps for a process: its parent, its start time (lstart, to
// the second, in five fields) and its command line. A process ps does not
// list is os.ErrNotExist.
func readProc(pid int) (hostProc, error) {
	cmd := exec.Command("ps", "-o", "ppid=,lstart=,args=", "-p", strconv.Itoa(pid))
	cmd.Env = append(os.Environ(), "LC_ALL=C") // lstart in the five fields parsed below
	out, err := cmd.Output()
	f := strings.Fields(string(out))
	if len(f) == 0 {
		var ee *exec.ExitError
		if errors.As(err, &ee) || err == nil {
			return hostProc{}, os.ErrNotExist
		}
		return hostProc{}, err
	}
	if len(f) < 7 {
		return hostProc{}, errors.New("unexpected ps output")
	}
	ppid, err := strconv.Atoi(f[0])
	if err != nil {
		return hostProc{}, err
	}
	return hostProc{pid: pid, ppid: ppid, start: strings.Join(f[1:6], " "), argv: f[6:]}, nil
}

// bootID tells one boot from the next.
func bootID() string {
	out, _ := exec.Command("sysctl", "-n", "kern.boottime").Output()
	return strings.TrimSpace(string(out))
}
