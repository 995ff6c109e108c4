package main

import (
	"os"
	"testing"
)

// The host is the nearest ancestor that is not a launcher: through the
// chains npx and the npm launcher make, and a shell's -c.
func TestFindHostSkipsLaunchers(t *testing.T) {
	procs := map[int]hostProc{
		10: {pid: 10, ppid: 9, start: "a", argv: []string{"node", "/home/u/.npm/_npx/1/node_modules/.bin/slivingdoc", "serve"}},
		9:  {pid: 9, ppid: 8, start: "b", argv: []string{"sh", "-c", "slivingdoc serve"}},
		8:  {pid: 8, ppid: 7, start: "c", argv: []string{"npm exec -y slivingdoc serve"}},
		7:  {pid: 7, ppid: 1, start: "d", argv: []string{"/usr/bin/node", "/opt/host/client.js"}},
		20: {pid: 20, ppid: 7, start: "e", argv: []string{"/usr/bin/env", "slivingdoc", "serve"}},
		30: {pid: 30, ppid: 1, start: "f", argv: []string{"bash", "-lc", "slivingdoc serve"}},
		40: {pid: 40, ppid: 1, start: "g", argv: []string{"claude"}},
	}
	read := func(pid int) (hostProc, error) {
		p, ok := procs[pid]
		if !ok {
			return hostProc{}, os.ErrNotExist
		}
		return p, nil
	}
	for _, c := range []struct{ from, want int }{{10, 7}, {9, 7}, {8, 7}, {7, 7}, {20, 7}, {30, 30}, {40, 40}} {
		got, ok := findHost(c.from, read)
		if !ok || got.pid != c.want {
			t.Errorf("findHost(%d) = %d, %v; want %d", c.from, got.pid, ok, c.want)
		}
	}
	if _, ok := findHost(99, read); ok {
		t.Error("a process that cannot be read was taken as the host")
	}
}
