//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY returns a pseudo-terminal pair (Linux /dev/ptmx).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// Colour only on a terminal, never with a non-empty NO_COLOR or TERM=dumb.
func TestColourOnlyOnTerminal(t *testing.T) {
	_, tty := openPTY(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name    string
		out     io.Writer
		noColor string
		term    string
		want    bool
	}{
		{"terminal", tty, "", "xterm", true},
		{"NO_COLOR", tty, "1", "xterm", false},
		{"dumb terminal", tty, "", "dumb", false},
		{"pipe", w, "", "xterm", false},
		{"buffer", &bytes.Buffer{}, "", "xterm", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			t.Setenv("TERM", tc.term)
			if got := colourFor(tc.out).on; got != tc.want {
				t.Fatalf("colour %v, want %v", got, tc.want)
			}
		})
	}
}

// runOnTTY runs the binary as agent a with stdout on a pseudo-terminal,
// extra added to its environment, and returns what the terminal received.
func runOnTTY(t *testing.T, a *agent, args []string, extra ...string) string {
	t.Helper()
	master, tty := openPTY(t)
	cmd := exec.Command(a.bin, args...)
	cmd.Env = append(append(append([]string{}, a.env...), "TERM=xterm"), extra...)
	cmd.Stdout, cmd.Stderr = tty, io.Discard
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&out, master); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		master.Close()
		<-done
	}
	return out.String()
}

// Through the binary: a pull on a terminal is coloured, with NO_COLOR or
// into a pipe it is plain text.
func TestCLIColour(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	runTTY := func(extra ...string) string { return runOnTTY(t, a, []string{"pull", a.dir}, extra...) }
	if out := runTTY(); !strings.Contains(out, "\x1b[") || !strings.Contains(out, "generation 0") {
		t.Errorf("no colour on a terminal: %q", out)
	}
	if out := runTTY("NO_COLOR=1"); strings.Contains(out, "\x1b[") || !strings.Contains(out, "generation 0") {
		t.Errorf("colour with NO_COLOR: %q", out)
	}
	if o := a.run("pull", a.dir); o.code != 0 || strings.Contains(o.stdout, "\x1b[") {
		t.Errorf("colour into a pipe:\n%s", o)
	}
}
