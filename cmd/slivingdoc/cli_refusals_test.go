package main

import (
	"maps"
	"testing"
)

// A directory that was never pulled has no baseline: commit is refused
// with PULL_FIRST, and nothing is published.
func TestCLICommitBeforePull(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a := nb.agent("a")
		a.write("a.md", "hello\n")
		rep := mustFail(t, a.run("commit", a.dir, "-m", "too early"))
		if rep.code != "INVALID_REQUEST" || rep.reason != "NOT_PULLED" || rep.action != "PULL_FIRST" || rep.retryable {
			t.Fatalf("report: %+v", rep)
		}
		if g := nb.generation(); g != 0 {
			t.Fatalf("generation %d after a refused commit", g)
		}
		if got := a.files(); !maps.Equal(got, map[string]string{"a.md": "hello\n"}) {
			t.Fatalf("local files changed: %q", got)
		}
	})
}

// A commit with nothing to publish succeeds at the same generation and
// adds nothing to the log.
func TestCLINoOpCommit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a := nb.agent("a")
		a.pull()
		a.write("a.md", "hello\n")
		a.commit("one")
		r := a.commit("nothing changed")
		if r.generation != 1 || len(r.files) != 0 || r.totals != [3]int{} {
			t.Fatalf("no-op commit: %+v", r)
		}
		if g := nb.generation(); g != 1 {
			t.Fatalf("generation %d after a no-op commit", g)
		}
		lg := a.run("log")
		if lg.code != 0 || countLines(lg.stdout, "generation ") != 1 {
			t.Fatalf("log after a no-op commit:\n%s", lg)
		}
		// A no-op pull reports no files either.
		if r := a.pull(); r.generation != 1 || len(r.files) != 0 {
			t.Fatalf("no-op pull: %+v", r)
		}
	})
}

func countLines(s, prefix string) int {
	n := 0
	for _, l := range splitLines(s) {
		if len(l) >= len(prefix) && l[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
