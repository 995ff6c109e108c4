package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A notebook goes round: pull into an empty directory, commit files, pull
// them into a second directory, change them there, and see the change,
// the status and the log from the first.
func TestCLIRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")

		first := a.pull()
		if first.generation != 0 || len(first.files) != 0 || first.totals != [3]int{} {
			t.Fatalf("pull of an empty notebook: %+v", first)
		}
		a.write("a.md", "one\ntwo\n")
		a.write("dir/b.md", "x\n")
		c := a.commit("first")
		if c.generation != 1 || c.files["a.md"] != [2]int{2, 0} || c.files["dir/b.md"] != [2]int{1, 0} || c.totals != [3]int{2, 3, 0} {
			t.Fatalf("first commit: %+v", c)
		}

		p := b.pull()
		if p.generation != 1 || p.files["a.md"] != [2]int{2, 0} || p.files["dir/b.md"] != [2]int{1, 0} {
			t.Fatalf("pull into a fresh directory: %+v", p)
		}
		if got, want := b.files(), a.files(); !maps.Equal(got, want) {
			t.Fatalf("b has %q, a has %q", got, want)
		}
		if st := a.run("status", a.dir); st.code != 0 || st.stdout != "generation 1, notebook unchanged\nno local changes\n" {
			t.Fatalf("clean status:\n%s", st)
		}

		b.write("a.md", "one\nTWO\n")
		b.write("c.md", "new\n")
		if err := os.Remove(filepath.Join(b.dir, "dir", "b.md")); err != nil {
			t.Fatal(err)
		}
		st := b.run("status", b.dir)
		if want := "generation 1, notebook unchanged\nM  a.md\nA  c.md\nD  dir/b.md\n"; st.code != 0 || st.stdout != want {
			t.Fatalf("status with changes: want\n%s\n%s", want, st)
		}
		c = b.commit("second\n\nwith a body")
		if c.generation != 2 || c.files["a.md"] != [2]int{1, 1} || c.files["c.md"] != [2]int{1, 0} || c.files["dir/b.md"] != [2]int{0, 1} || c.totals != [3]int{3, 2, 2} {
			t.Fatalf("second commit: %+v", c)
		}

		if st := a.run("status", a.dir); st.code != 0 || st.stdout != "generation 1, notebook at generation 2: pull to update\nno local changes\n" {
			t.Fatalf("status after the notebook moved:\n%s", st)
		}
		p = a.pull()
		if p.generation != 2 || len(p.files) != 3 {
			t.Fatalf("pull of the change: %+v", p)
		}
		if got, want := a.files(), b.files(); !maps.Equal(got, want) {
			t.Fatalf("a has %q, b has %q", got, want)
		}
		if _, err := os.Stat(filepath.Join(a.dir, "dir")); !os.IsNotExist(err) {
			t.Errorf("the emptied directory is still there: %v", err)
		}

		lg := a.run("log")
		if lg.code != 0 {
			t.Fatalf("log:\n%s", lg)
		}
		want := "generation 2  "
		if !strings.HasPrefix(lg.stdout, want) || !strings.Contains(lg.stdout, "\n    second\n    \n    with a body\n  a.md  +1 -1\n") ||
			!strings.Contains(lg.stdout, "\n\ngeneration 1  ") || !strings.Contains(lg.stdout, "\n    first\n") ||
			strings.Index(lg.stdout, "generation 2") > strings.Index(lg.stdout, "generation 1") {
			t.Fatalf("log, newest first, with messages and files:\n%s", lg)
		}
		if one := a.run("log", "-n", "1"); one.code != 0 || strings.Contains(one.stdout, "generation 1") || !strings.Contains(one.stdout, "generation 2") {
			t.Fatalf("log -n 1:\n%s", one)
		}
	})
}
