package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Issue 37, point 2, and docs/local-state.md L5/L7: a directory without a
// sync record is never merged against an empty base. Files equal to the
// notebook's are adopted; a differing file holds its own text and the
// notebook's, each once, in one conflict block (NO_RECORD).

const noRecordPlan = "# plan\n- first\n- second\n- third\n"

// wantBothTexts checks that content is one NO_RECORD block: local's text,
// then the notebook's.
func wantBothTexts(t *testing.T, content, local, remote string) {
	t.Helper()
	want := "<<<<<<< local\n" + local + "=======\n" + remote + ">>>>>>> remote\n"
	if content != want {
		t.Fatalf("conflicted file:\n%s\nwant:\n%s", content, want)
	}
}

func TestCLICopiedDirectoryKeepsBothTextsNeverConcatenates(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a := nb.agent("a")
		a.pull()
		a.write("plan.md", noRecordPlan)
		a.write("other.md", "unchanged\n")
		a.commit("one")
		copyDir := filepath.Join(filepath.Dir(a.dir), "copy")
		if out, err := exec.Command("cp", "-r", a.dir, copyDir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		edited := "# plan\n- first\n- second, edited\n- third\n"
		if err := os.WriteFile(filepath.Join(copyDir, "plan.md"), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		r := mustFail(t, a.run("pull", copyDir))
		if r.code != "CONTENT_CONFLICT" || len(r.files) != 1 || r.files[0].path != "plan.md" || r.files[0].reason != "NO_RECORD" || r.files[0].ranges != "1-11" {
			t.Fatalf("report %+v", r)
		}
		got := readTree(t, copyDir)
		wantBothTexts(t, got["plan.md"], edited, noRecordPlan)
		if got["other.md"] != "unchanged\n" {
			t.Fatalf("the equal file was not adopted as it is: %q", got["other.md"])
		}
		// Resolved by keeping the edit, the next commit publishes one plan.
		if err := os.WriteFile(filepath.Join(copyDir, "plan.md"), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		mustOK(t, a.run("commit", copyDir, "-m", "edit from the copy"))
		a.pull()
		if plan := a.read("plan.md"); plan != edited {
			t.Fatalf("the notebook's plan.md after the copy's commit: %q", plan)
		}
	})
}

func TestCLIClearedPrivateRootKeepsEditsAsBothTexts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		a.pull()
		a.write("plan.md", noRecordPlan)
		a.write("gone.md", "deleted locally\n")
		a.write("same.md", "same\n")
		a.commit("one")
		b.pull()
		b.write("plan.md", noRecordPlan+"- fourth, by b\n")
		b.commit("b")
		local := "# plan\n- first, by a\n- second\n- third\n"
		a.write("plan.md", local)
		if err := os.Remove(filepath.Join(a.dir, "gone.md")); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(a.priv); err != nil { // a cleaner emptied it
			t.Fatal(err)
		}
		r := mustFail(t, a.run("pull", a.dir))
		if len(r.files) != 1 || r.files[0].path != "plan.md" || r.files[0].reason != "NO_RECORD" {
			t.Fatalf("report %+v", r)
		}
		got := a.files()
		wantBothTexts(t, got["plan.md"], local, noRecordPlan+"- fourth, by b\n")
		// With no record, a deletion cannot be told from a file never
		// received: the notebook's file comes back (documented).
		if got["gone.md"] != "deleted locally\n" || got["same.md"] != "same\n" {
			t.Fatalf("files %q", got)
		}
	})
}

func TestCLIPullWithoutPathRefusesANonEmptyDirectoryWithoutRecord(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("n.md", "published\n")
	a.commit("one")
	dir := filepath.Join(t.TempDir(), "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.md"), []byte("my own notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := a.runIn(dir, a.env, "pull")
	r, ok := parseReport(o.stdout)
	if o.code == 0 || !ok || r.code != "INVALID_REQUEST" || r.reason != "DIRECTORY_NOT_EMPTY" || r.action != "FIX_REQUEST" {
		t.Fatalf("pull with no path in a non-empty directory: %v", o)
	}
	if got := readTree(t, dir); len(got) != 1 || got["mine.md"] != "my own notes\n" {
		t.Fatalf("the refused pull changed the directory: %q", got)
	}
	// Named, the same directory is adopted (no difference: nothing to keep twice).
	mustOK(t, a.run("pull", dir))
	if got := readTree(t, dir); got["n.md"] != "published\n" || got["mine.md"] != "my own notes\n" {
		t.Fatalf("after a named pull: %q", got)
	}
}

// Issue 37, point 7: a file L held at an ignored path, once the rule is
// dropped, is not published over another writer's file there: its base is
// unknown, so both texts are kept.
func TestCLIDroppedIgnoreRuleNeverOverwritesAnotherWritersFile(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a, b := nb.agent("a"), nb.agent("b")
	a.pull()
	a.write("keep.md", "k\n")
	a.commit("one")
	mustOK(t, a.run("pull", a.dir, "--ignore", "private.md"))
	a.write("private.md", "a's private notes\n")
	b.pull()
	b.write("private.md", "b's published file\n")
	b.commit("b publishes private.md")
	mustOK(t, a.run("pull", a.dir, "--ignore", "private.md"))
	if got := a.read("private.md"); got != "a's private notes\n" {
		t.Fatalf("an ignored file was touched: %q", got)
	}
	r := mustFail(t, a.run("pull", a.dir))
	if len(r.files) != 1 || r.files[0].path != "private.md" || r.files[0].reason != "NO_RECORD" {
		t.Fatalf("report %+v", r)
	}
	wantBothTexts(t, a.read("private.md"), "a's private notes\n", "b's published file\n")
	if r := mustFail(t, a.run("commit", a.dir, "-m", "x")); r.reason != "UNRESOLVED_MARKERS" {
		t.Fatalf("commit with the block: %+v", r)
	}
	b.pull()
	if got := b.read("private.md"); got != "b's published file\n" {
		t.Fatalf("b's file was replaced: %q", got)
	}
}
