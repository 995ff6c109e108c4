//go:build unix

package main

import (
	"maps"
	"syscall"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// crashOps lists the operations that reach each failpoint of the engine
// (server.Failpoints): all of them lie on the rewrite path of both
// operations, except the one between publication and rewrite.
func crashOps(point string) []string {
	if point == server.FailAfterPublish {
		return []string{"commit"}
	}
	return []string{"pull", "commit"}
}

// kill -9 at each failpoint: the next call recovers from `current`, and no
// accepted change and no local edit is lost; nothing is published twice.
func TestCLICrashRecovery(t *testing.T) {
	bin := cliFailpointBinary(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, point := range server.Failpoints {
				for _, op := range crashOps(point) {
					t.Run(point+"/"+op, func(t *testing.T) {
						nb := newNotebook(t, b)
						crashAndRecover(t, nb, bin, point, op)
					})
				}
			}
		})
	}
}

func crashAndRecover(t *testing.T, nb *notebook, bin, point, op string) {
	a, b := nb.agent("a"), nb.agent("b")
	a.pull()
	a.write("f.md", lines(10, nil))
	a.write("old.md", "to be deleted by b\n")
	a.commit("base")
	b.pull()
	// b's accepted change that a has not seen: an edit, an add, a delete.
	b.write("f.md", lines(10, map[int]string{9: "b nine"}))
	b.write("b.md", "from b\n")
	b.remove("old.md")
	b.commit("b")
	// a's local edits.
	a.write("f.md", lines(10, map[int]string{2: "a two"}))
	a.write("a.md", "from a\n")

	a.bin = bin
	args := a.syncArgs(op)
	o := a.runEnv([]string{"SLIVINGDOC_FAILPOINT=" + point}, args...)
	if o.signal != syscall.SIGKILL {
		t.Fatalf("the failpoint did not fire:\n%s", o)
	}

	// The next call recovers; a RECOVERY_FAILURE says so once and the call
	// after it must succeed.
	o = a.run("pull", a.dir)
	if o.code == 1 {
		if rep := mustFail(t, o); rep.code != "RECOVERY_FAILURE" || rep.action != "PULL" || !rep.retryable {
			t.Fatalf("first call after the crash: %+v\n%s", rep, o)
		}
		o = a.run("pull", a.dir)
	}
	mustOK(t, o)
	want := map[string]string{
		"f.md": lines(10, map[int]string{2: "a two", 9: "b nine"}),
		"a.md": "from a\n",
		"b.md": "from b\n",
	}
	if got := a.files(); !maps.Equal(got, want) {
		t.Fatalf("after recovery a has %q, want %q", got, want)
	}
	c := a.commit("a again")
	if c.generation != 3 {
		t.Fatalf("generation %d after recovery: want 3 (base, b, a once): %+v", c.generation, c)
	}
	obs := nb.agent("observer")
	obs.pull()
	if got := obs.files(); !maps.Equal(got, want) {
		t.Fatalf("accepted notebook %q, want %q", got, want)
	}
}
