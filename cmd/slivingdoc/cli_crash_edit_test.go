//go:build unix

package main

import (
	"maps"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// Killed at any failpoint while it brings another writer's lines into L,
// then the caller edits those very files (far from the other writer's
// lines) before its next call, and the other writer edits next to its own
// lines: the next call takes both cleanly. An edit made on top of the
// tool's half-finished rewrite is measured against what the rewrite wrote,
// not against the old baseline, which would count the rewrite's lines as
// the caller's and conflict with the other writer's next edit beside them
// (the campaign's foreign conflicts in shared.md after a killed commit).
func TestCLICrashDuringRewriteThenLocalEditThenAdjacentRemoteEdit(t *testing.T) {
	bin := cliFailpointBinary(t)
	for _, point := range server.Failpoints {
		for _, op := range crashOps(point) {
			for _, next := range []string{"pull", "commit"} {
				t.Run(point+"/"+op+"/then-"+next, func(t *testing.T) {
					crashThenLocalEdit(t, newNotebook(t, backends[0]), bin, point, op, next)
				})
			}
		}
	}
}

func crashThenLocalEdit(t *testing.T, nb *notebook, bin, point, op, next string) {
	a, b := killDuringRewriteOfOthersEdit(t, nb, bin, point, op)

	// The caller edits both files, wherever the rewrite left them.
	for _, f := range []string{"f.md", "g.md"} {
		text := a.read(f)
		a.write(f, "a edit of "+f+"\n"+text[len("l1\n"):])
	}

	b.pull()
	b.write("f.md", lines(10, map[int]string{5: "b five", 6: "b six"}))
	b.write("g.md", lines(10, map[int]string{4: "b g four", 5: "b g five"}))
	b.commit("b2")

	args := []string{"pull", a.dir}
	if next == "commit" {
		args = []string{"commit", a.dir, "-m", "a after the crash"}
	}
	o := a.run(args...)
	if o.code == 1 {
		if rep := mustFail(t, o); rep.code != "RECOVERY_FAILURE" {
			t.Fatalf("first call after the crash: %+v\n%s", rep, o)
		}
		o = a.run(args...)
	}
	mustOK(t, o)
	want := map[string]string{
		"f.md": lines(10, map[int]string{1: "a edit of f.md", 5: "b five", 6: "b six"}),
		"g.md": lines(10, map[int]string{1: "a edit of g.md", 4: "b g four", 5: "b g five"}),
		"a.md": "from a\n",
	}
	if got := a.files(); !maps.Equal(got, want) {
		t.Fatalf("after recovery a has %q, want %q", got, want)
	}
	if next == "pull" {
		a.commit("a again")
	}
	obs := nb.agent("observer")
	obs.pull()
	if got := obs.files(); !maps.Equal(got, want) {
		t.Fatalf("accepted notebook %q, want %q", got, want)
	}
}
