//go:build unix

package main

import (
	"syscall"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// The fault campaign's finding 1, through the CLI: a commit killed right
// after the store accepted it, then an edit next to its lines, commits
// cleanly (no conflict with the writer's own published lines).
func TestCLIKilledAfterPublishThenAdjacentEdit(t *testing.T) {
	bin := cliFailpointBinary(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			nb := newNotebook(t, b)
			a := nb.agent("a")
			a.pull()
			a.write("n.md", "a\n")
			a.commit("one")
			a.write("n.md", "a\nx\n")
			a.bin = bin
			o := a.runEnv([]string{"SLIVINGDOC_FAILPOINT=" + server.FailAfterPublish}, "commit", a.dir, "-m", "two")
			if o.signal != syscall.SIGKILL {
				t.Fatalf("the failpoint did not fire:\n%s", o)
			}
			a.write("n.md", "a\nx\ny\n")
			a.commit("three")
			obs := nb.agent("observer")
			obs.pull()
			if got := obs.read("n.md"); got != "a\nx\ny\n" {
				t.Fatalf("accepted n.md = %q", got)
			}
		})
	}
}
