//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// watchDeadline bounds each wait on the watch's output. It is no timing
// assertion: a loaded machine only makes the test slower, never fail,
// until this generous bound.
const watchDeadline = 2 * time.Minute

// startWatch starts `log --watch --json -n 1` for agent a and returns the
// process and its output, one line at a time (closed at EOF).
func startWatch(t *testing.T, a *agent) (*exec.Cmd, io.ReadCloser, <-chan string) {
	t.Helper()
	cmd := exec.Command(a.bin, "log", "--watch", "--json", "-n", "1")
	cmd.Env, cmd.Dir, cmd.Stderr = a.env, filepath.Dir(a.dir), os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, out, lines
}

// nextGeneration waits for the watch's next line and returns its
// generation.
func nextGeneration(t *testing.T, lines <-chan string) uint64 {
	t.Helper()
	select {
	case l, ok := <-lines:
		var en struct {
			Generation uint64 `json:"generation"`
		}
		if !ok || json.Unmarshal([]byte(l), &en) != nil {
			t.Fatalf("watch output ended or is no JSON line: %q", l)
		}
		return en.Generation
	case <-time.After(watchDeadline):
		t.Fatalf("no watch output within %v", watchDeadline)
	}
	return 0
}

// waitExit waits for the process to end and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(watchDeadline):
		t.Fatalf("the watch did not end within %v", watchDeadline)
	}
	return -1
}

// log --watch prints the publications made while it runs, each exactly
// once, and ends with status 0 on SIGINT.
func TestCLILogWatch(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a, b := nb.agent("a"), nb.agent("b")
	a.pull()
	a.write("log.md", "0\n")
	a.commit("before the watch") // 1
	cmd, _, lines := startWatch(t, b)
	if g := nextGeneration(t, lines); g != 1 {
		t.Fatalf("the recent publication: generation %d, want 1", g)
	}
	for i := 1; i <= 3; i++ {
		a.write("log.md", fmt.Sprintf("%d\n", i))
		a.commit(fmt.Sprint("while watching ", i)) // 2, 3, 4
	}
	for want := uint64(2); want <= 4; want++ {
		if g := nextGeneration(t, lines); g != want {
			t.Fatalf("watch printed generation %d, want %d", g, want)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// Everything it printed after the three, up to its exit: any line is
	// a duplicate.
	for {
		l, ok := "", true
		select {
		case l, ok = <-lines:
		case <-time.After(watchDeadline):
			t.Fatalf("the watch's output did not end within %v of SIGINT", watchDeadline)
		}
		if !ok {
			break
		}
		t.Errorf("printed after the three: %q", l)
	}
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("log --watch ended with status %d on SIGINT, want 0", code)
	}
}

// log --watch ends with status 0 when its output is closed (log --watch |
// head): the next publication's write fails, and that ends it.
func TestCLILogWatchClosedOutput(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a, b := nb.agent("a"), nb.agent("b")
	a.pull()
	a.write("log.md", "0\n")
	a.commit("before the watch")
	cmd, out, lines := startWatch(t, b)
	nextGeneration(t, lines)
	out.Close()
	a.write("log.md", "1\n")
	a.commit("while watching")
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("log --watch ended with status %d on a closed output, want 0", code)
	}
}
