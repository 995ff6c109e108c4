package main

import (
	"strings"
	"testing"
)

// Issue 14 item 1: pulling twice without resolving never nests blocks, the
// file keeps its blocks as they were (reported CONFLICT_MARKERS), commits
// stay refused, and once resolved the remote's newer line is merged in,
// not dropped.
func TestCLIPullTwiceWithoutResolvingNeverNests(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		a.pull()
		a.write("o.md", "a\nx\n") // both sides replace x: a real conflict
		a.commit("init")
		b.pull()
		a.write("o.md", "a\nlocal1\n")
		b.write("o.md", "a\nremote1\n")
		b.commit("r1")
		r := mustFail(t, a.run("pull", a.dir))
		if f, _ := r.file("o.md"); r.reason != "MERGE_CONFLICT" || f.reason != "TEXT_CONFLICT" || f.ranges != "2-6" {
			t.Fatalf("first pull: %+v", r)
		}
		blocks := a.read("o.md")
		b.write("o.md", "a\nremote1\nremote2\n")
		b.commit("r2")
		r = mustFail(t, a.run("pull", a.dir))
		if f, _ := r.file("o.md"); r.reason != "MERGE_CONFLICT" || f.reason != "CONFLICT_MARKERS" || f.ranges != "2-6" {
			t.Fatalf("second pull: %+v", r)
		}
		if got := a.read("o.md"); got != blocks {
			t.Fatalf("the second pull rewrote the file holding blocks:\n%s", got)
		}
		r = mustFail(t, a.run("commit", a.dir, "-m", "oops"))
		if f, _ := r.file("o.md"); r.reason != "UNRESOLVED_MARKERS" || f.ranges != "2-6" {
			t.Fatalf("commit with blocks: %+v", r)
		}
		// Resolved by keeping both sides of the block: remote2, which the
		// block never showed, arrives with the next pull.
		a.write("o.md", "a\nlocal1\nremote1\n")
		a.pull()
		if got := a.read("o.md"); got != "a\nlocal1\nremote1\nremote2\n" {
			t.Fatalf("after resolving, o.md = %q", got)
		}
		a.commit("resolved")
		b.pull()
		if got := b.read("o.md"); got != "a\nlocal1\nremote1\nremote2\n" {
			t.Fatalf("published o.md = %q", got)
		}
	})
}

// Resolving and committing at once (no pull in between) also merges the
// held remote change instead of publishing the resolution over it.
func TestCLIResolvedHeldFileCommitsWithTheRemoteChange(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		a.pull()
		a.write("o.md", "a\nx\n") // both sides replace x: a real conflict
		a.commit("init")
		b.pull()
		a.write("o.md", "a\nlocal1\n")
		b.write("o.md", "a\nremote1\n")
		b.commit("r1")
		mustFail(t, a.run("pull", a.dir))
		b.write("o.md", "a\nremote1\nremote2\n")
		b.commit("r2")
		mustFail(t, a.run("pull", a.dir))
		b.write("o.md", "a\nremote1\nremote2\nremote3\n")
		b.commit("r3")
		mustFail(t, a.run("pull", a.dir))       // held still, against the same base
		a.write("o.md", "a\nlocal1\nremote1\n") // resolved: both sides of the block
		a.commit("resolved")
		obs := nb.agent("obs")
		obs.pull()
		if got := obs.read("o.md"); got != "a\nlocal1\nremote1\nremote2\nremote3\n" {
			t.Fatalf("published o.md = %q", got)
		}
	})
}

// A nested structure written by an older version (or pasted) is one range
// covering every marker line, and the commit is refused.
func TestCLICommitRefusesNestedBlocks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a := nb.agent("a")
		a.pull()
		a.write("o.md", "a\n")
		a.commit("init")
		nested := strings.Join([]string{"a", "<<<<<<< local", "local1", "=======", "remote1", "<<<<<<< local", ">>>>>>> remote", "=======", "remote2", ">>>>>>> remote", ""}, "\n")
		a.write("o.md", nested)
		r := mustFail(t, a.run("commit", a.dir, "-m", "oops"))
		if f, _ := r.file("o.md"); r.reason != "UNRESOLVED_MARKERS" || f.reason != "CONFLICT_MARKERS" || f.ranges != "2-10" {
			t.Fatalf("nested blocks: %+v", r)
		}
	})
}
