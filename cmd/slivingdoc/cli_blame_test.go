package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// blameOut is blame --json as a script reads it.
type blameOut struct {
	Path       string `json:"path"`
	Generation uint64 `json:"generation"`
	Lines      []struct {
		Line       int     `json:"line"`
		Generation uint64  `json:"generation"`
		Before     bool    `json:"before"`
		Time       *string `json:"time"`
		Author     string  `json:"author"`
		Message    *string `json:"message"`
		Text       string  `json:"text"`
	} `json:"lines"`
}

// blame names, for each line of the accepted file, the publication that
// last changed it: two writers edit one file, one of them merging the
// other's change; uncommitted edits are not shown; PATH is relative to the
// directory it is run in (or DIR); -L and --json select and format.
func TestCLIBlame(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a, b := nb.agent("a"), nb.agent("b")
	a.pull()
	a.write("sub/plan.md", "# Plan\n\none\ntwo\nthree\n")
	base := a.commit("base").generation
	b.pull()
	a.write("sub/plan.md", "# Plan by a\n\none\ntwo\nthree\n")
	byA := a.commit("a: title\nwith a body").generation
	b.write("sub/plan.md", "# Plan\n\none\ntwo\nthree, by b\n")
	byB := b.commit("b: three").generation
	b.write("sub/plan.md", "not committed\n")

	o := b.run("blame", "--json", "notes/sub/plan.md") // from the notebook's parent
	var got blameOut
	if o.code != 0 || json.Unmarshal([]byte(o.stdout), &got) != nil {
		t.Fatalf("blame --json:\n%s", o)
	}
	want := []uint64{byA, base, base, base, byB}
	if got.Path != "sub/plan.md" || got.Generation != byB || len(got.Lines) != len(want) {
		t.Fatalf("blame --json: %+v", got)
	}
	for i, l := range got.Lines {
		if l.Line != i+1 || l.Generation != want[i] || l.Before || l.Time == nil || l.Message == nil || l.Author == "" {
			t.Errorf("line %d: %+v, want generation %d", i+1, l, want[i])
		}
	}
	if *got.Lines[0].Message != "a: title\nwith a body" || got.Lines[4].Text != "three, by b\n" {
		t.Errorf("messages and text: %+v", got.Lines)
	}

	// The text form, run inside the directory with -L and --long.
	o = a.execIn(filepath.Join(a.dir, "sub"), a.env, "", "blame", "--long", "-L", "4,9", "plan.md")
	lines := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n")
	// Every publication names its author (the CLI claims the user and
	// host): the third column is never "unknown" here.
	row := regexp.MustCompile(`^generation (\d+)\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  (\S+)  (.*?)\s+(\d+)  (.*)$`)
	if o.code != 0 || len(lines) != 2 {
		t.Fatalf("blame -L 4,9:\n%s", o)
	}
	for i, l := range lines {
		m := row.FindStringSubmatch(l)
		if m == nil || m[1] != fmt.Sprint(want[3+i]) || m[2] == "unknown" || m[4] != fmt.Sprint(4+i) {
			t.Errorf("row %q, want generation %d, line %d", l, want[3+i], 4+i)
		}
	}
	if !strings.Contains(lines[1], "b: three") || !strings.HasSuffix(lines[1], "  three, by b") {
		t.Errorf("--long row %q", lines[1])
	}
	// DIR PATH.
	if o := a.run("blame", "-L", "1,1", a.dir, "sub/plan.md"); o.code != 0 || !strings.HasPrefix(o.stdout, fmt.Sprintf("generation %d ", byA)) {
		t.Errorf("blame DIR PATH:\n%s", o)
	}

	for _, args := range [][]string{
		{"blame"},
		{"blame", "-L", "0,2", "notes/sub/plan.md"},
		{"blame", "-L", "3,2", "notes/sub/plan.md"},
		{"blame", "a", "b", "c"},
	} {
		if o := a.run(args...); o.code != 2 || o.stdout != "" {
			t.Errorf("usage error expected:\n%s", o)
		}
	}
	r := mustFail(t, a.run("blame", "notes/sub/missing.md"))
	if r.code != "INVALID_REQUEST" || r.reason != "INVALID_ARGUMENT" {
		t.Errorf("a missing file: %+v", r)
	}
}

// A line older than the retained history says so, naming the oldest
// retained publication. The history is cut by a version-4 sweep with a
// window of 8 (sweepV4), past a checkpoint every 8 generations.
func TestCLIBlameBeforeRetainedHistory(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.env = append(a.env, "SLIVINGDOC_CHECKPOINT_PACKS=8")
	a.pull()
	a.write("a.md", "old\n")
	a.commit("first")
	for i := range 25 {
		a.write("a.md", fmt.Sprintf("old\nnew %d\n", i))
		a.commit("edit")
	}
	sweepV4(t, nb, 0)
	var v verifyJSON
	if o := a.run("verify", "--json"); json.Unmarshal([]byte(o.stdout), &v) != nil || v.OldestPublication <= 1 {
		t.Fatalf("the history was not cut:\n%s", o)
	}
	o := a.run("blame", "notes/a.md")
	first := fmt.Sprintf("before generation %d ", v.OldestPublication)
	if o.code != 0 || !strings.HasPrefix(o.stdout, first) || !strings.Contains(o.stdout, "\ngeneration ") {
		t.Errorf("blame, want a first line starting %q:\n%s", first, o)
	}
	var got blameOut
	if o := a.run("blame", "--json", "notes/a.md"); json.Unmarshal([]byte(o.stdout), &got) != nil || !got.Lines[0].Before || got.Lines[0].Time != nil || got.Lines[0].Message != nil || got.Lines[0].Generation != v.OldestPublication {
		t.Errorf("blame --json:\n%s", o)
	}
}
