//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// A person's Ctrl-C in the middle of the rewrite of L does not cut it.
// pull and commit start without the signal handler (a no-op call never
// installs it) and arm it just before they rewrite L, so SIGINT there (the
// failpoint build sends it after the first file) neither kills the
// process nor leaves L half rewritten: every file of the accepted state is
// in L when the call ends, the local edit is kept, and the call ends with
// status 0 or, once the handler has cancelled it, 130.
func TestCLIInterruptDuringRewrite(t *testing.T) {
	bin := cliFailpointBinary(t)
	for _, op := range []string{"pull", "commit"} {
		t.Run(op, func(t *testing.T) {
			nb := newNotebook(t, backends[0])
			a, b := nb.agent("a"), nb.agent("b")
			a.pull()
			a.write("f.md", "base\n")
			a.commit("base")
			b.pull()
			want := map[string]string{"f.md": "base\n", "a.md": "from a\n"}
			for i := range 6 {
				name := fmt.Sprintf("b%d.md", i)
				want[name] = fmt.Sprintf("from b, file %d\n", i)
				b.write(name, want[name])
			}
			b.commit("b's files")
			a.write("a.md", "from a\n")

			a.bin = bin
			args := a.syncArgs(op)
			o := a.runEnv([]string{"SLIVINGDOC_FAILPOINT=" + server.FailInterrupt + server.FailMidRewrite}, args...)
			if o.signal != 0 || (o.code != 0 && o.code != exitInterrupted) {
				t.Fatalf("want the call to end by itself with 0 or %d:\n%s", exitInterrupted, o)
			}
			if o.code == exitInterrupted && !strings.Contains(o.stderr, "interrupted") {
				t.Fatalf("status %d without saying so:\n%s", o.code, o)
			}
			if got := a.files(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("L after the interrupted %s (exit %d):\n got  %q\n want %q", op, o.code, got, want)
			}
		})
	}
}
