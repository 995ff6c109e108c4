//go:build linux

package main

import (
	"strings"
	"testing"
)

// show and log -p colour the diff on a terminal only: never with NO_COLOR,
// never into a pipe (where the patch must stay applicable).
func TestCLIHistoryColour(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("n.md", "one\n")
	a.commit("seed")
	a.write("n.md", "two\n")
	a.commit("edit")
	runTTY := func(args []string, extra ...string) string { return runOnTTY(t, a, args, extra...) }
	for _, args := range [][]string{{"show", "2"}, {"log", "-p"}, {"diff", "1"}} {
		if out := runTTY(args); !strings.Contains(out, ansiRed+"-one") || !strings.Contains(out, ansiGreen+"+two") {
			t.Errorf("%v: no coloured diff on a terminal: %q", args, out)
		}
		if out := runTTY(args, "NO_COLOR=1"); strings.Contains(out, "\x1b[") || !strings.Contains(out, "+two") {
			t.Errorf("%v: colour with NO_COLOR: %q", args, out)
		}
		if o := a.run(args...); o.code != 0 || strings.Contains(o.stdout, "\x1b[") || !strings.Contains(o.stdout, "\n+two\n") {
			t.Errorf("%v: colour into a pipe:\n%s", args, o)
		}
	}
}
