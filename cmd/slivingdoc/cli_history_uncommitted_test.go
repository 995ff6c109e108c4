package main

// History commands never destroy work that was never committed: restore
// and revert refuse, naming each file, when they would overwrite or delete
// a file edited since the last pull or commit or one never committed;
// --force keeps a copy of each in the private state first and says where.
// An empty path argument is refused, and a subdirectory of a notebook
// directory limits the command to it.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

// historyFixture is a notebook at generation 2 and an agent's directory
// with an edited committed file and two files never committed:
//
//	generation 1  a.md "a1", sub/s.md "s1"
//	generation 2  a.md "a2", sub/s.md "s2", sub/t.md "t2"
//	local         a.md "my edit" (LOCAL_EDIT), notes.md and sub/u.md (NEVER_COMMITTED)
func historyFixture(t *testing.T) (*agent, map[string]string) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("a.md", "a1\n")
	a.write("sub/s.md", "s1\n")
	a.commit("one")
	a.write("a.md", "a2\n")
	a.write("sub/s.md", "s2\n")
	a.write("sub/t.md", "t2\n")
	a.commit("two")
	a.write("a.md", "my edit\n")
	a.write("notes.md", "never committed\n")
	a.write("sub/u.md", "never committed either\n")
	return a, a.files()
}

// wantRefused checks an UNCOMMITTED_CHANGES report naming exactly want
// (path → file reason) and that the directory is byte for byte before.
func wantRefused(t *testing.T, a *agent, o outcome, want map[string]string, before map[string]string) {
	t.Helper()
	rep := mustFail(t, o)
	if rep.code != "INVALID_REQUEST" || rep.reason != diag.ReasonUncommittedChanges || rep.action != "FIX_REQUEST" || rep.retryable {
		t.Fatalf("want UNCOMMITTED_CHANGES:\n%s", o)
	}
	got := map[string]string{}
	for _, f := range rep.files {
		got[f.path] = f.reason
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("named files %v, want %v:\n%s", got, want, o)
	}
	if after := a.files(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused command changed the directory:\n before %q\n after  %q", before, after)
	}
}

var reSaved = regexp.MustCompile(`(?m)^saved (\d+) files? with uncommitted work in (.+):$`)

// wantSaved checks that the output names a directory in the private root
// holding exactly the given copies, and returns it.
func wantSaved(t *testing.T, a *agent, out string, copies map[string]string) string {
	t.Helper()
	m := reSaved.FindStringSubmatch(out)
	if m == nil || m[1] != fmt.Sprint(len(copies)) {
		t.Fatalf("want the saved copies named:\n%s", out)
	}
	dir := m[2]
	if rel, err := filepath.Rel(a.priv, dir); err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("copies kept in %s, outside the private root %s", dir, a.priv)
	}
	for p := range copies {
		if !strings.Contains(out, "\n  "+p+"\n") {
			t.Fatalf("%s not listed among the copies:\n%s", p, out)
		}
	}
	if got := readTree(t, dir); fmt.Sprint(got) != fmt.Sprint(copies) {
		t.Fatalf("copies %q, want %q", got, copies)
	}
	return dir
}

// restore nb --generation 1 over an edit and two files never committed:
// refused, all three named, nothing touched; with --force, done, and the
// three texts kept where the output says.
func TestCLIRestoreKeepsUncommittedWork(t *testing.T) {
	a, before := historyFixture(t)
	risky := map[string]string{"a.md": diag.FileLocalEdit, "notes.md": diag.FileNeverCommitted, "sub/u.md": diag.FileNeverCommitted}
	wantRefused(t, a, a.run("restore", a.dir, "--generation", "1"), risky, before)
	// Naming the files does not make it safer.
	wantRefused(t, a, a.run("restore", a.dir, "--generation", "1", "a.md", "notes.md"), map[string]string{"a.md": diag.FileLocalEdit, "notes.md": diag.FileNeverCommitted}, before)
	// A restore that touches none of them goes ahead.
	mustOKPrefix(t, a.run("restore", a.dir, "--generation", "1", "sub/s.md"), "OK  restored generation 1 ")
	if got := a.read("sub/s.md"); got != "s1\n" {
		t.Fatalf("sub/s.md %q", got)
	}

	o := a.run("restore", "--force", a.dir, "--generation", "1")
	if o.code != 0 {
		t.Fatalf("%s", o)
	}
	wantSaved(t, a, o.stdout, map[string]string{"a.md": "my edit\n", "notes.md": "never committed\n", "sub/u.md": "never committed either\n"})
	if got, want := a.files(), map[string]string{"a.md": "a1\n", "sub/s.md": "s1\n"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after restore --force: %q, want %q", got, want)
	}
	// The restore is a local edit like any: commit publishes it.
	if c := a.commit("back to one"); c.generation != 3 {
		t.Fatalf("commit after the restore: generation %d", c.generation)
	}
}

// restore nb --generation 1 "" (an unset shell variable) is refused, not
// the whole notebook.
func TestCLIRestoreRefusesAnEmptyPath(t *testing.T) {
	a, before := historyFixture(t)
	for _, args := range [][]string{
		{"restore", a.dir, "--generation", "1", ""},
		{"restore", "--force", a.dir, "--generation", "1", "sub/s.md", ""},
	} {
		o := a.run(args...)
		if rep := mustFail(t, o); rep.code != "INVALID_REQUEST" || rep.reason != "INVALID_ARGUMENT" {
			t.Fatalf("%s", o)
		}
		if after := a.files(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("%v changed the directory: %q", args, after)
		}
	}
	// An empty DIR is a usage error, not the working directory.
	for _, args := range [][]string{{"restore", "", "--generation", "1"}, {"revert", "", "2"}} {
		if o := a.run(args...); o.code != 2 || o.stdout != "" {
			t.Fatalf("want a usage error:\n%s", o)
		}
	}
	if after := a.files(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("an empty DIR changed the directory: %q", after)
	}
}

// restore nb/sub --generation 1 acts on sub only: the edit and the file
// never committed outside it are neither named nor touched; inside it,
// paths are relative to sub.
func TestCLIRestoreSubdirectory(t *testing.T) {
	a, before := historyFixture(t)
	sub := filepath.Join(a.dir, "sub")
	wantRefused(t, a, a.run("restore", sub, "--generation", "1"), map[string]string{"sub/u.md": diag.FileNeverCommitted}, before)
	mustOKPrefix(t, a.run("restore", sub, "--generation", "1", "t.md"), "OK  restored generation 1 ")
	want := map[string]string{"a.md": "my edit\n", "notes.md": "never committed\n", "sub/s.md": "s2\n", "sub/u.md": "never committed either\n"}
	if got := a.files(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("restore sub t.md: %q, want %q", got, want)
	}
	os.Remove(filepath.Join(sub, "u.md"))
	mustOKPrefix(t, a.run("restore", sub, "--generation", "1"), "OK  restored generation 1 ")
	want = map[string]string{"a.md": "my edit\n", "notes.md": "never committed\n", "sub/s.md": "s1\n"}
	if got := a.files(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("restore sub: %q, want %q", got, want)
	}
}

// revert refuses to rewrite or delete a file holding uncommitted work, and
// a subdirectory limits it; --force keeps the copy.
func TestCLIRevertKeepsUncommittedWork(t *testing.T) {
	a, before := historyFixture(t)
	// Reverting 2 rewrites a.md (edited) and sub/s.md, deletes sub/t.md.
	wantRefused(t, a, a.run("revert", a.dir, "2"), map[string]string{"a.md": diag.FileLocalEdit}, before)
	sub := filepath.Join(a.dir, "sub")
	mustOKPrefix(t, a.run("revert", sub, "2"), "OK  reverted generation 2 ")
	want := map[string]string{"a.md": "my edit\n", "notes.md": "never committed\n", "sub/s.md": "s1\n", "sub/u.md": "never committed either\n"}
	if got := a.files(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("revert of sub: %q, want %q", got, want)
	}
	// A file never committed where the revert brings one back.
	a.write("sub/t.md", "mine\n")
	a.commit("three") // 3: publishes the revert of sub and sub/t.md, notes.md, sub/u.md, a.md
	a.write("sub/t.md", "mine, edited\n")
	before = a.files()
	wantRefused(t, a, a.run("revert", a.dir, "3"), map[string]string{"sub/t.md": diag.FileLocalEdit}, before)
	o := a.run("revert", "--force", a.dir, "3")
	if o.code != 1 { // the edit overlaps what 3 added: a conflict block keeps both
		t.Fatalf("revert --force over an overlapping edit:\n%s", o)
	}
	if rep := mustFail(t, o); rep.code != "CONTENT_CONFLICT" {
		t.Fatalf("%s", o)
	}
	// The report is on stdout; where the copy is, on stderr.
	wantSaved(t, a, o.stderr, map[string]string{"sub/t.md": "mine, edited\n"})
}

// rowUncommittedChanges is the docs/errors.md row's test: CLI only, like
// the other history rows.
func rowUncommittedChanges(t *testing.T, _ *notebook, row diag.CatalogRow) {
	a, _ := historyFixture(t)
	rep := mustFail(t, a.run("restore", a.dir, "--generation", "1", "notes.md"))
	if rep.code != string(row.Code) || rep.reason != row.Reason || rep.action != string(row.Action) || rep.retryable != row.Retryable || len(rep.files) != 1 || !contains(row.FileReasons, rep.files[0].reason) {
		t.Fatalf("report %+v, want the row %+v", rep, row)
	}
}
