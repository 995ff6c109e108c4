package main

import (
	"os/exec"
	"testing"
)

// Two agents each create log.md in a notebook that has none, with the same
// first lines and one line of their own. The second commit merges the two
// files cleanly: the shared lines once, then the accepted (remote) file's
// own line, then the committer's; both agents end with that file.
const (
	logByA     = "# Log\n- started\n- a\n"
	logByB     = "# Log\n- started\n- b\n"
	logAThenB  = "# Log\n- started\n- a\n- b\n" // b committed second: a's line is remote's
	logBThenA  = "# Log\n- started\n- b\n- a\n" // merge-file with b as remote
	headerOnce = "# Log\n"
)

func TestCLISameFileCreatedByTwoAgents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		a.pull()
		b.pull()
		a.write("log.md", logByA)
		if r := a.commit("a starts the log"); r.generation != 1 {
			t.Fatalf("a: %+v", r)
		}
		b.write("log.md", logByB)
		r := b.commit("b starts the log")
		if r.generation != 2 {
			t.Fatalf("b: %+v", r)
		}
		if got := b.read("log.md"); got != logAThenB {
			t.Fatalf("b's log.md %q, want %q", got, logAThenB)
		}
		if r := a.pull(); r.generation != 2 {
			t.Fatalf("a pull: %+v", r)
		}
		if got := a.read("log.md"); got != logAThenB {
			t.Fatalf("a's log.md %q, want %q", got, logAThenB)
		}
	})
}

// The same two files through merge-file, an empty base standing for the
// file neither had: clean (exit 0), one header, remote's line first.
func TestCLIMergeFileSameFileCreated(t *testing.T) {
	bin := cliBinary(t)
	paths := writeTriple(t, logByA, "", logByB)
	out, err := exec.Command(bin, append([]string{"merge-file"}, paths...)...).Output()
	if err != nil {
		t.Fatalf("merge-file: %v (stdout %q)", err, out)
	}
	if string(out) != logBThenA {
		t.Fatalf("stdout %q, want %q", out, logBThenA)
	}
	// git's rules conflict there; --strict keeps them.
	cmd := exec.Command(bin, append([]string{"merge-file", "--strict"}, paths...)...)
	out, err = cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("--strict: %v, stdout %q", err, out)
	}
	if string(out[:len(headerOnce)]) != headerOnce {
		t.Fatalf("--strict stdout %q", out)
	}
}

// Two MCP servers, one per agent, create log.md concurrently: the second
// commit merges as the CLI does.
func TestMCPTwoServersSameFileCreated(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		sa, sb := a.serve(), b.serve()
		sa.pull()
		sb.pull()
		a.write("log.md", logByA)
		if r := sa.commit("a starts the log"); generation(r) != 1 {
			t.Fatalf("a: %s", r.raw)
		}
		b.write("log.md", logByB)
		if r := sb.commit("b starts the log"); generation(r) != 2 {
			t.Fatalf("b: %s", r.raw)
		}
		if got := b.read("log.md"); got != logAThenB {
			t.Fatalf("b's log.md %q, want %q", got, logAThenB)
		}
		if r := sa.pull(); generation(r) != 2 {
			t.Fatalf("a pull: %s", r.raw)
		}
		if got := a.read("log.md"); got != logAThenB {
			t.Fatalf("a's log.md %q, want %q", got, logAThenB)
		}
	})
}
