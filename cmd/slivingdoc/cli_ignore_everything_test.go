package main

import (
	"strings"
	"testing"
)

// An ignore pattern that would leave out every file (`*`) or every file in
// every directory (`*/`) once crashed the binary with a Go stack trace, and
// SLIVINGDOC_IGNORE='*' killed serve at start-up. Each is now a usage
// error: exit 2, one line naming the pattern, nothing pulled or published.
func TestCLIIgnoreEverythingRefused(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("notes.md", "kept\n")
	a.commit("start")
	gen := nb.generation()
	a.write("notes.md", "kept\nand edited\n")
	for _, p := range []string{"*", "*/", "**", "/*"} {
		for _, cmd := range [][]string{{"pull", a.dir}, {"commit", a.dir, "-m", "x"}, {"status", a.dir}} {
			o := a.run(append(cmd, "--ignore", p)...)
			if o.code != 2 || o.signal != 0 || o.stdout != "" {
				t.Fatalf("--ignore %q:\n%s", p, o)
			}
			if lines := strings.Split(strings.TrimSuffix(o.stderr, "\n"), "\n"); len(lines) != 1 || !strings.Contains(o.stderr, "would leave out every file") || !strings.Contains(o.stderr, `"`+p+`"`) {
				t.Fatalf("--ignore %q: want one line naming the pattern:\n%s", p, o)
			}
		}
	}
	if got := nb.generation(); got != gen {
		t.Fatalf("generation %d after refused commits, want %d", got, gen)
	}
	if got := a.read("notes.md"); got != "kept\nand edited\n" {
		t.Fatalf("the local edit became %q", got)
	}
	// serve refuses to start, with the message on stderr and no stack.
	for _, env := range []string{"SLIVINGDOC_IGNORE=*", "SLIVINGDOC_IGNORE=*.png,*/"} {
		o := a.runEnv([]string{env}, "serve")
		if o.code != 2 || o.signal != 0 || o.stdout != "" || !strings.Contains(o.stderr, "slivingdoc serve: ") || !strings.Contains(o.stderr, "would leave out every file") || strings.Contains(o.stderr, "goroutine") {
			t.Fatalf("%s serve:\n%s", env, o)
		}
	}
	// A pattern that keeps something still works beside them.
	mustOK(t, a.run("commit", a.dir, "-m", "edit", "--ignore", "*.png"))
}
