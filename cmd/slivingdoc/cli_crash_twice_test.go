//go:build unix

package main

import (
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// Issue 37, point 1: writer A appends to a shared log while B publishes;
// A's commit is killed at a failpoint, B publishes again, A appends and is
// killed again, then A commits normally. Every line is in the notebook
// exactly once, for every pair of failpoints (docs/local-state.md, L3/L4).
// With replaced lines instead of appends, no conflict appears in the line
// A never touched.
func TestCLITwoCrashesInARowKeepEveryLineOnce(t *testing.T) {
	bin := cliFailpointBinary(t)
	nb := newNotebook(t, backends[0])
	for _, p1 := range server.Failpoints {
		for _, p2 := range server.Failpoints {
			t.Run(p1+"/"+p2, func(t *testing.T) {
				nb := &notebook{t: t, bin: nb.bin, env: fileStoreEnv(t), backend: nb.backend}
				a, b := nb.agent("a"), nb.agent("b")
				a.bin, b.bin = bin, bin
				a.pull()
				a.write("log.md", "# log\n")
				a.write("plan.md", "one\ntwo\nthree\nfour\nfive\n")
				a.commit("init")
				b.pull()
				killed := func(point, msg string) {
					t.Helper()
					o := a.runEnv([]string{"SLIVINGDOC_FAILPOINT=" + point}, "commit", a.dir, "-m", msg)
					if o.signal != syscall.SIGKILL && o.code != 0 {
						t.Fatalf("commit at %s neither killed nor accepted: %v", point, o)
					}
				}
				b.write("log.md", b.read("log.md")+"b1\n")
				b.write("plan.md", strings.Replace(b.read("plan.md"), "five", "FIVE-b1", 1))
				b.commit("b1")
				a.write("log.md", a.read("log.md")+"a1\n")
				a.write("plan.md", strings.Replace(a.read("plan.md"), "one", "ONE-a1", 1))
				killed(p1, "a1")
				b.write("log.md", b.read("log.md")+"b2\n")
				b.write("plan.md", strings.Replace(b.read("plan.md"), "four", "FOUR-b2", 1))
				b.commit("b2")
				a.write("log.md", a.read("log.md")+"a2\n")
				a.write("plan.md", strings.Replace(a.read("plan.md"), "two", "TWO-a2", 1))
				killed(p2, "a2")
				b.write("log.md", b.read("log.md")+"b3\n")
				b.commit("b3")
				a.write("log.md", a.read("log.md")+"a3\n")
				if o := a.run("commit", a.dir, "-m", "a3"); o.code != 0 {
					t.Fatalf("the plain commit after two crashes failed: %v", o)
				}
				b.pull()
				log := strings.Split(strings.TrimSuffix(b.read("log.md"), "\n"), "\n")
				want := []string{"# log", "a1", "a2", "a3", "b1", "b2", "b3"}
				got := slices.Clone(log)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("log.md holds %q, want each of %q once", log, want)
				}
				if plan := b.read("plan.md"); plan != "ONE-a1\nTWO-a2\nthree\nFOUR-b2\nFIVE-b1\n" {
					t.Fatalf("plan.md = %q", plan)
				}
				if o := a.run("verify"); o.code != 0 {
					t.Fatalf("verify: %v", o)
				}
			})
		}
	}
}
