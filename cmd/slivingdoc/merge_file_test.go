package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeTriple writes local, base and remote into a temporary directory and
// returns their paths in the command's argument order.
func writeTriple(t *testing.T, local, base, remote string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, f := range []struct{ name, content string }{{"local.md", local}, {"base.md", base}, {"remote.md", remote}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func runMerge(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"merge-file"}, args...), stdio{strings.NewReader(""), &out, &errb})
	return code, out.String(), errb.String()
}

func TestMergeFileClean(t *testing.T) {
	paths := writeTriple(t, "A\nb\nc\n", "a\nb\nc\n", "a\nb\nc\r\nd")
	code, out, _ := runMerge(paths...)
	if code != 0 || out != "A\nb\nc\r\nd" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
}

func TestMergeFileConflicts(t *testing.T) {
	paths := writeTriple(t, "a\nmine\nc\n", "a\nb\nc\n", "a\ntheirs\nc\n")
	code, out, stderr := runMerge(paths...)
	want := "a\n<<<<<<< local\nmine\n=======\ntheirs\n>>>>>>> remote\nc\n"
	if code != 1 || out != want {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if !strings.Contains(stderr, "2-6") {
		t.Errorf("stderr %q does not give the block's range 2-6", stderr)
	}
	for _, p := range paths {
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("<<<<<<<")) {
			t.Errorf("%s was modified", p)
		}
	}
}

func TestMergeFileErrors(t *testing.T) {
	paths := writeTriple(t, "a\n", "a\n", "a\n")
	missing := filepath.Join(t.TempDir(), "missing.md")
	for _, tc := range []struct {
		name string
		args []string
		want string // a token of the message: the offending path or role
	}{
		{"missing local", []string{missing, paths[1], paths[2]}, "local"},
		{"missing base", []string{paths[0], missing, paths[2]}, "missing.md"},
		{"directory as remote", []string{paths[0], paths[1], t.TempDir()}, "directory"},
		{"two files", paths[:2], "3 files"},
		{"four files", append(paths, paths[0]), "3 files"},
		{"unknown flag", append([]string{"--ours"}, paths...), "ours"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runMerge(tc.args...)
			if code != 2 || out != "" || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
			}
		})
	}
}

func TestMergeFileHelp(t *testing.T) {
	code, out, _ := runMerge("-h")
	if code != 0 || !strings.Contains(out, "<local> <base> <remote>") {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
}

// Through the real binary, as a person uses it: with --strict, exit
// statuses and stdout match `git merge-file -p` on the same files.
func TestMergeFileBinaryMatchesGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	bin := cliBinary(t)
	for _, tc := range []struct{ local, base, remote string }{
		{"# T\n\nmine\n\nend\n", "# T\n\nold\n\nend\n", "# T\n\nold\n\nEND\n"},
		{"x\r\nL\r\ny\r\n", "x\r\nb\r\ny\r\n", "x\r\nR\r\ny\r\n"},
		{"only local", "", "only remote"},
		{"a\nb\nL\n", "a\nb\n", "a\nb\nR\n"},
	} {
		paths := writeTriple(t, tc.local, tc.base, tc.remote)
		ours := exec.Command(bin, append([]string{"merge-file", "--strict"}, paths...)...)
		ref := exec.Command(git, append([]string{"merge-file", "-p", "-L", "local", "-L", "base", "-L", "remote"}, paths...)...)
		ourOut, _ := ours.Output()
		refOut, _ := ref.Output()
		if !bytes.Equal(ourOut, refOut) || (ours.ProcessState.ExitCode() == 0) != (ref.ProcessState.ExitCode() == 0) {
			t.Errorf("%q: slivingdoc exit %d %q; git exit %d %q", tc, ours.ProcessState.ExitCode(), ourOut, ref.ProcessState.ExitCode(), refOut)
		}
	}
}

// -h anywhere on the line prints the help and exits 0, even next to a
// wrong argument.
func TestMergeFileHelpAnywhere(t *testing.T) {
	for _, args := range [][]string{{"a", "-h"}, {"a", "b", "c", "--help"}, {"--strict", "-h"}, {"--bogus", "-h"}, {"-help"}} {
		code, out, stderr := runMerge(args...)
		if code != 0 || !strings.Contains(out, "<local> <base> <remote>") || stderr != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
	// After --, -h is a file name.
	if code, _, stderr := runMerge("--", "-h", "b", "c"); code != 2 || !strings.Contains(stderr, "-h") {
		t.Errorf("-- -h: exit %d, stderr %q", code, stderr)
	}
}

// Both sides appending is a clean merge (DESIGN §4 rule 6); --strict,
// before or after the files, gives the conflict git merge-file writes.
func TestMergeFileConcurrentAdditions(t *testing.T) {
	paths := writeTriple(t, "# Log\n- a\n- local\n", "# Log\n- a\n", "# Log\n- a\n- remote\n")
	code, out, _ := runMerge(paths...)
	if code != 0 || out != "# Log\n- a\n- remote\n- local\n" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	want := "# Log\n- a\n<<<<<<< local\n- local\n=======\n- remote\n>>>>>>> remote\n"
	for _, args := range [][]string{append([]string{"--strict"}, paths...), append(append([]string(nil), paths...), "--strict")} {
		if code, out, _ := runMerge(args...); code != 1 || out != want {
			t.Errorf("%q: exit %d, stdout %q", args, code, out)
		}
	}
}

// A FIFO as an input blocks the read until a writer comes; SIGINT still
// ends the command, with the interrupted status.
func TestMergeFileFIFOInterrupted(t *testing.T) {
	bin := cliBinary(t)
	paths := writeTriple(t, "a\n", "a\n", "a\n")
	fifo := filepath.Join(t.TempDir(), "base.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(bin, "merge-file", paths[0], fifo, paths[2])
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The signal must reach the command once it waits on the FIFO
		// (earlier, before its handler is installed, the default action
		// would end it, and the test would pass without the fix).
		waitOnFIFO(t, cmd.Process.Pid)
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		// A command still waiting on the FIFO blocks here until the test
		// binary's timeout fails the test: no wall-clock bound of our own.
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Errorf("%v: exit %d, stderr %q, want %d", sig, code, stderr.String(), exitInterrupted)
		}
	}
}

// waitOnFIFO waits until a thread of process pid blocks opening a FIFO
// (Linux reports wait_for_partner as its wait channel). There is no
// deadline: a loaded machine may take long to get the process there, and
// one that never gets there is failed by the test binary's timeout. Where
// /proc does not say (not Linux), the test cannot know and skips.
func waitOnFIFO(t *testing.T, pid int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc/PID/task: cannot tell when the process waits on the FIFO")
	}
	for {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		if err != nil || len(tasks) == 0 {
			t.Fatalf("process %d ended before it waited on the FIFO", pid)
		}
		for _, f := range tasks {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), "wait_for_partner") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond) // polling pace only
	}
}

// The inputs are read whole whatever their size, with the bytes as they
// are (no trailing newline, CR, NUL): an input the merge takes unchanged
// comes out byte for byte.
func TestMergeFileReadsInputsWhole(t *testing.T) {
	big := bytes.Repeat([]byte("a line of the note\r\n"), 1<<16)
	for _, n := range []int{0, 1, 4095, 4096, 4097, 65537, len(big) - 3} {
		content := string(append(big[:n:n], '\x00', 'z'))
		for _, tc := range []struct{ name, local, base, remote string }{
			{"remote", "", "", content},
			{"local", content, "", ""},
			{"all three", content, content, content},
		} {
			paths := writeTriple(t, tc.local, tc.base, tc.remote)
			code, out, stderr := runMerge(paths...)
			if code != 0 || out != content {
				t.Fatalf("%d bytes changed in %s: exit %d, %d bytes out (stderr %q)", len(content), tc.name, code, len(out), stderr)
			}
		}
	}
}

// readRegular reads regular files, through symbolic links, and refuses at
// once (without waiting on it) what is not one, so that merge-file reports
// it as before.
func TestMergeFileReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "note.md")
	if err := os.WriteFile(file, []byte("x\ny"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		if b, ok := readRegular(p); !ok || string(b) != "x\ny" {
			t.Errorf("%s: %q, %v", p, b, ok)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "missing"), fifo} {
		if b, ok := readRegular(p); ok {
			t.Errorf("%s: read %q as a regular file", p, b)
		}
	}
}
