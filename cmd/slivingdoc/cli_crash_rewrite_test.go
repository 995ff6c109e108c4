//go:build unix

package main

import (
	"maps"
	"strings"
	"syscall"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// Issue 14 item 2: killed at any failpoint while it brings another
// writer's lines into L (a pull, or a commit that merged them and was
// accepted), then that writer edits the lines next to its own: the next
// pull takes the edit cleanly. The tool's half-finished rewrite is never
// taken for a local edit, so no conflict appears in files the caller never
// touched, whether the rewrite reached them (f.md) or not (g.md).
func TestCLICrashDuringRewriteThenAdjacentRemoteEdit(t *testing.T) {
	bin := cliFailpointBinary(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, point := range server.Failpoints {
				for _, op := range crashOps(point) {
					t.Run(point+"/"+op, func(t *testing.T) {
						crashThenAdjacentEdit(t, newNotebook(t, b), bin, point, op)
					})
				}
			}
		})
	}
}

func crashThenAdjacentEdit(t *testing.T, nb *notebook, bin, point, op string) {
	a, b := killDuringRewriteOfOthersEdit(t, nb, bin, point, op)
	if op == "pull" {
		// Status counts the tool's half-finished rewrite as no local change:
		// only a.md, the caller's own addition, is listed.
		st := a.run("status", a.dir)
		if st.code != 0 || !strings.Contains(st.stdout, "A  a.md\n") || strings.Contains(st.stdout, "M  ") {
			t.Fatalf("status after the crash:\n%s", st)
		}
	}

	b.pull()
	b.write("f.md", lines(10, map[int]string{5: "b five", 6: "b six"}))
	b.write("g.md", lines(10, map[int]string{4: "b g four", 5: "b g five"}))
	b.commit("b2")

	o := a.run("pull", a.dir)
	if o.code == 1 {
		if rep := mustFail(t, o); rep.code != "RECOVERY_FAILURE" {
			t.Fatalf("first call after the crash: %+v\n%s", rep, o)
		}
		o = a.run("pull", a.dir)
	}
	mustOK(t, o)
	want := map[string]string{
		"f.md": lines(10, map[int]string{5: "b five", 6: "b six"}),
		"g.md": lines(10, map[int]string{4: "b g four", 5: "b g five"}),
		"a.md": "from a\n",
	}
	if got := a.files(); !maps.Equal(got, want) {
		t.Fatalf("after recovery a has %q, want %q", got, want)
	}
	a.commit("a again")
	obs := nb.agent("observer")
	obs.pull()
	if got := obs.files(); !maps.Equal(got, want) {
		t.Fatalf("accepted notebook %q, want %q", got, want)
	}
}

// A second kill during the resynchronisation of the first (its own
// rewrite interrupted in turn) still leaves nothing to conflict with: f.md,
// which the first rewrite reached and the second did not need to touch,
// keeps its rolled-forward base through the second record.
func TestCLITwoCrashesInARowDuringRewrites(t *testing.T) {
	bin := cliFailpointBinary(t)
	for _, points := range [][2]string{
		{server.FailMidRewrite, server.FailMidRewrite},
		{server.FailAfterRewrite, server.FailAfterRewrite},
		// The resynchronisation dies after its own record, before its flag:
		// the first flag must still find the first record.
		{server.FailMidRewrite, server.FailAfterRewriteRecord},
	} {
		t.Run(points[0]+"+"+points[1], func(t *testing.T) {
			nb := newNotebook(t, backends[0])
			a, b := nb.agent("a"), nb.agent("b")
			a.pull()
			for _, f := range []string{"f.md", "g.md", "h.md"} {
				a.write(f, lines(10, nil))
			}
			a.commit("base")
			b.pull()
			kills := 0
			kill := func() {
				t.Helper()
				point := points[kills]
				kills++
				a.bin = bin
				if o := a.runEnv([]string{"SLIVINGDOC_FAILPOINT=" + point}, "pull", a.dir); o.signal != syscall.SIGKILL {
					t.Fatalf("the failpoint did not fire:\n%s", o)
				}
				a.bin = nb.bin
			}
			f := map[int]string{3: "b f three"}
			gh := map[int]string{3: "b three"}
			b.write("f.md", lines(10, f))
			b.write("g.md", lines(10, gh))
			b.write("h.md", lines(10, gh))
			b.commit("b1")
			kill() // reaches f.md (the first in order) at least
			gh[4] = "b four"
			b.write("g.md", lines(10, gh))
			b.write("h.md", lines(10, gh))
			b.commit("b2")
			kill() // the resynchronisation's rewrite: g.md, h.md only
			f[4] = "b f four"
			gh[5] = "b five"
			b.write("f.md", lines(10, f))
			b.write("g.md", lines(10, gh))
			b.write("h.md", lines(10, gh))
			b.commit("b3")
			o := a.run("pull", a.dir)
			if o.code == 1 {
				if rep := mustFail(t, o); rep.code != "RECOVERY_FAILURE" {
					t.Fatalf("first call after the crashes: %+v\n%s", rep, o)
				}
				o = a.run("pull", a.dir)
			}
			mustOK(t, o)
			want := map[string]string{"f.md": lines(10, f), "g.md": lines(10, gh), "h.md": lines(10, gh)}
			if got := a.files(); !maps.Equal(got, want) {
				t.Fatalf("after the crashes a has %q, want %q", got, want)
			}
		})
	}
}

// killDuringRewriteOfOthersEdit sets up agent a behind b's edit of line 5 of
// f.md and g.md, with an addition of its own (a.md), and kills a's pull or
// commit (op) at the failpoint point while it brings b's edit in.
func killDuringRewriteOfOthersEdit(t *testing.T, nb *notebook, bin, point, op string) (a, b *agent) {
	t.Helper()
	a, b = nb.agent("a"), nb.agent("b")
	a.pull()
	a.write("f.md", lines(10, nil))
	a.write("g.md", lines(10, nil))
	a.commit("base")
	b.pull()
	b.write("f.md", lines(10, map[int]string{5: "b five"}))
	b.write("g.md", lines(10, map[int]string{5: "b g five"}))
	b.commit("b1")
	a.write("a.md", "from a\n")

	a.bin = bin
	args := a.syncArgs(op)
	if o := a.runEnv([]string{"SLIVINGDOC_FAILPOINT=" + point}, args...); o.signal != syscall.SIGKILL {
		t.Fatalf("the failpoint did not fire:\n%s", o)
	}
	a.bin = nb.bin
	return a, b
}
