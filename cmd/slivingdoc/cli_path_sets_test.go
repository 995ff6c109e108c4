package main

import (
	"strings"
	"testing"
)

// Writable and read-only sets, from flags or the environment: a commit
// that changes a file outside them is refused with READ_ONLY_PATH naming
// the file, the file is reset to the accepted content, the report lists
// the sets, and allowed changes publish. A bad entry is a usage error.
func TestCLIPathSets(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		owner := nb.agent("owner")
		owner.pull()
		owner.write("docs/guide.md", "guide\n")
		owner.write("notes/a.md", "a\n")
		owner.write("faq.md", "faq\n")
		owner.commit("layout")

		a := nb.agent("a")
		a.env = append(a.env, "SLIVINGDOC_READ_ONLY=docs:faq.md")
		a.pull()
		a.write("docs/guide.md", "guide\nvandalised\n")
		a.write("notes/a.md", "a\nallowed\n")
		o := a.run("commit", a.dir, "-m", "mixed")
		rep := mustFail(t, o)
		if rep.code != "READ_ONLY_PATH" || rep.reason != "INSIDE_READ_ONLY" || rep.action != "WRITE_ELSEWHERE" || rep.retryable {
			t.Fatalf("report: %+v", rep)
		}
		if f, ok := rep.file("docs/guide.md"); !ok || f.reason != "INSIDE_READ_ONLY" {
			t.Fatalf("files: %+v", rep.files)
		}
		if !strings.Contains(o.stdout, "\nread-only: docs, faq.md\n") {
			t.Errorf("the report does not list the read-only set:\n%s", o)
		}
		if got := a.read("docs/guide.md"); got != "guide\n" {
			t.Errorf("refused file not reset: %q", got)
		}
		if r := a.commit("allowed part"); r.files["notes/a.md"] != [2]int{1, 0} || len(r.files) != 1 {
			t.Fatalf("allowed change: %+v", r)
		}

		w := nb.agent("w")
		w.pull()
		w.write("faq.md", "faq\nchanged\n")
		rep = mustFail(t, w.run("commit", w.dir, "-m", "outside", "--writable", "notes", "--writable", "docs/"))
		if f, ok := rep.file("faq.md"); rep.code != "READ_ONLY_PATH" || rep.reason != "OUTSIDE_WRITABLE" || !ok || f.reason != "OUTSIDE_WRITABLE" {
			t.Fatalf("outside the writable set: %+v", rep)
		}
		if got := w.read("faq.md"); got != "faq\n" {
			t.Errorf("refused file not reset: %q", got)
		}

		for _, bad := range [][]string{{"--writable", "/abs"}, {"--read-only", "../up"}, {"--writable", "x", "--read-only", "x"}} {
			if o := w.run(append([]string{"pull", w.dir}, bad...)...); o.code != 2 || o.stderr == "" {
				t.Errorf("bad path set %v:\n%s", bad, o)
			}
		}
	})
}

// The message can come from standard input (-F -), byte for byte.
func TestCLIMessageFromStdin(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("x.md", "x\n")
	msg := "subject line\n\n  body with  spaces\tand tabs\n"
	mustOK(t, a.runStdin(msg, "commit", a.dir, "-F", "-"))
	lg := a.run("log", "-n", "1")
	if !strings.Contains(lg.stdout, "\n    subject line\n    \n      body with  spaces\tand tabs\n") {
		t.Fatalf("log does not show the message as given:\n%s", lg)
	}
}
