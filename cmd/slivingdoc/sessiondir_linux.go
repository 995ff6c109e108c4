//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
)

// readProc reads a process from /proc: its parent, its start time in clock
// ticks since boot (field 22 of stat), and its command line. A process
// that does not exist is os.ErrNotExist.
func readProc(pid int) (hostProc, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return hostProc{}, err
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses,
	// so the fields start after the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return hostProc{}, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return hostProc{}, errors.New("unexpected /proc stat format")
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return hostProc{}, err
	}
	cmdline, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return hostProc{}, err
	}
	argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	return hostProc{pid: pid, ppid: ppid, start: f[19], argv: argv}, nil
}

// bootID tells one boot from the next (PIDs and tick counts repeat).
func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}
