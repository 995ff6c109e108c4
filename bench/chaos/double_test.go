//go:build unix

package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// A kill-twice runs the failpoints build at the first point until a
// commit dies there, then at the second point for the very next
// operation only (a survivor starts the pair over: the kills must be in a
// row), then the ordinary binary once, with no failpoint.
func TestDoubleKillStages(t *testing.T) {
	c := &campaign{cfg: config{bin: "plain"}, fpBin: "failpoints"}
	w := &writer{}
	pair := [2]string{server.FailMidRewrite, server.FailAfterBaseline}
	w.dbl = &doubleKill{first: pair[0], second: pair[1], stage: 1}
	step := func(wantBin, wantPoint string, end outcome) {
		t.Helper()
		bin, env, point := c.takeArm(w)
		if bin != wantBin || point != wantPoint || (point == "") != (len(env) == 0) {
			t.Fatalf("stage %d: ran %s with %v (point %q), want %s at %q", w.dbl.stage, bin, env, point, wantBin, wantPoint)
		}
		if point != "" && env[0] != "SLIVINGDOC_FAILPOINT="+point {
			t.Fatalf("environment %v for point %s", env, point)
		}
		w.armDone(point, opResult{Outcome: end})
	}
	step("failpoints", pair[0], outDomain) // nothing to rewrite: still armed
	step("failpoints", pair[0], outKilled)
	step("failpoints", pair[1], outOK) // survived: not two in a row
	if w.dbl.stage != 1 || w.dbl.restarts != 1 {
		t.Fatalf("after a missed second kill: stage %d, restarts %d", w.dbl.stage, w.dbl.restarts)
	}
	step("failpoints", pair[0], outKilled)
	step("failpoints", pair[1], outKilled)
	step("plain", "", outOK)
	if w.dbl.stage != 4 || w.dbl.plain.Outcome != outOK {
		t.Fatalf("after the plain commit: %+v", w.dbl)
	}
	if bin, _, point := c.takeArm(w); bin != "plain" || point != "" {
		t.Fatalf("after the kill-twice: %s at %q", bin, point)
	}
}

// The pairs in turn are every ordered pair of rewrite points, each once,
// starting with two mid-rewrite kills, and only points the engine has.
func TestDoublesInTurn(t *testing.T) {
	n := len(rewritePoints)
	if len(doublesInTurn) != n*n || doublesInTurn[0] != [2]string{server.FailMidRewrite, server.FailMidRewrite} {
		t.Fatalf("%d pairs starting with %v", len(doublesInTurn), doublesInTurn[0])
	}
	seen := map[[2]string]bool{}
	for _, p := range doublesInTurn {
		if seen[p] || !slices.Contains(server.Failpoints, p[0]) || !slices.Contains(server.Failpoints, p[1]) {
			t.Fatalf("pair %v repeated or not a failpoint", p)
		}
		seen[p] = true
	}
	if slices.Contains(rewritePoints, server.FailAfterPublish) {
		t.Fatal("after-publish is not inside a rewrite")
	}
}

// A writer in a kill-twice appends its edits at the end of the log file,
// after whatever other writers appended there, as in the report.
func TestDoubleKillEditsAppendToTheLog(t *testing.T) {
	dir := t.TempDir()
	for name, content := range initialTree(2) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, logFile), []byte("# log\nchaos-b1"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := os.Create(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	w := &writer{id: 0, dir: dir, tag: "chaos-a", rng: rand.New(rand.NewPCG(1, 1)), journal: j,
		dbl: &doubleKill{first: server.FailMidRewrite, second: server.FailMidRewrite, stage: 1}}
	var toks []string
	for range 3 {
		tok, err := w.edit()
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	got, _ := os.ReadFile(filepath.Join(dir, logFile))
	if want := "# log\nchaos-b1\n" + strings.Join(toks, "\n") + "\n"; string(got) != want || w.logPending != 3 || w.pending != 3 {
		t.Fatalf("log %q (pending %d, in the log %d), want %q", got, w.pending, w.logPending, want)
	}
}
