//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

// Issue 14 item 4 over MCP: the instructions' `<dir>/notes` addresses the
// notebook at <dir> (the result's path says so); no second copy is written
// into notes/ and the next commit publishes no notes/notes/….
func TestMCPSubdirectoryPathAddressesTheEnclosingNotebook(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	s := a.serve()
	s.pull()
	a.write("notes/n.md", "n\n")
	s.commit("one")
	sub := filepath.Join(a.dir, "notes")
	r := s.mustOK(ToolPullName, s.call(ToolPullName, map[string]any{"path": sub}))
	if r.str("path") != a.dir {
		t.Fatalf("pull of %s ran on %q, want the notebook %s", sub, r.str("path"), a.dir)
	}
	a.write("notes/m.md", "m\n")
	r = s.mustOK(ToolCommitName, s.call(ToolCommitName, map[string]any{"path": sub, "message": "two"}))
	if r.str("path") != a.dir {
		t.Fatalf("commit of %s ran on %q", sub, r.str("path"))
	}
	// A path below that does not exist yet addresses the notebook too, and
	// is not created.
	r = s.mustOK(ToolPullName, s.call(ToolPullName, map[string]any{"path": filepath.Join(a.dir, "notes", "new")}))
	if r.str("path") != a.dir {
		t.Fatalf("pull of notes/new ran on %q", r.str("path"))
	}
	obs := nb.agent("obs")
	obs.pull()
	want := map[string]string{"notes/n.md": "n\n", "notes/m.md": "m\n"}
	if got := obs.files(); len(got) != len(want) || got["notes/n.md"] != "n\n" || got["notes/m.md"] != "m\n" {
		t.Fatalf("published %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(a.dir, "notes", "notes")); !os.IsNotExist(err) {
		t.Fatalf("a nested copy exists: %v", err)
	}
}

func rowContainsNotebook(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	s := a.serve()
	inner := filepath.Join(a.dir, "team", "inner")
	s.mustOK(ToolPullName, s.call(ToolPullName, map[string]any{"path": inner}))
	a.write("top.md", "mine\n")
	r := s.call(ToolPullName, map[string]any{})
	wantRow(t, r, row)
	wantNoFiles(t, r)
	if msg := r.str("message"); !strings.Contains(msg, "team/inner") || strings.Contains(msg, a.priv) || strings.Contains(msg, a.dir) {
		t.Fatalf("message %q: want the other directory relative to the request", msg)
	}
	if a.read("top.md") != "mine\n" {
		t.Fatal("a refused pull changed a file")
	}
}

func rowBaselineLost(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	s := a.serve()
	s.pull()
	a.write("kept.md", "k\n")
	s.commit("one")
	a.write("kept.md", "k\nlocal edit\n")
	a.write("deleted-later.md", "d\n")
	baselines, _ := filepath.Glob(filepath.Join(a.priv, "dirs", "*", "baseline"))
	if len(baselines) != 1 {
		t.Fatalf("baselines %v", baselines)
	}
	if err := os.Remove(baselines[0]); err != nil {
		t.Fatal(err)
	}
	before := a.files()
	r := s.call(ToolCommitName, map[string]any{"message": "m"})
	wantRow(t, r, row)
	wantNoFiles(t, r)
	if got := a.files(); len(got) != len(before) || got["kept.md"] != before["kept.md"] {
		t.Fatalf("a refused call changed L: %q", got)
	}
	// A pull adopts the directory as one without a record: the edit is
	// kept beside the notebook's text (docs/local-state.md L7).
	r = s.call(ToolPullName, map[string]any{})
	wantError(t, r, "CONTENT_CONFLICT", "MERGE_CONFLICT", "EDIT_FILES", false)
	if f := r.files(); len(f) != 1 || f[0]["path"] != "kept.md" || f[0]["reason"] != "NO_RECORD" {
		t.Fatalf("pull without a baseline: %s", r.raw)
	}
	if got := a.read("kept.md"); got != "<<<<<<< local\nk\nlocal edit\n=======\nk\n>>>>>>> remote\n" {
		t.Fatalf("kept.md: %q", got)
	}
}

// rowDirectoryNotEmpty is CLI-only: `pull` with no path argument.
func rowDirectoryNotEmpty(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	a.write("mine.md", "m\n")
	o := a.runIn(a.dir, a.env, "pull")
	rep, ok := parseReport(o.stdout)
	if !ok || rep.code != string(row.Code) || rep.reason != row.Reason || rep.action != string(row.Action) || rep.retryable != row.Retryable || len(rep.files) != 0 {
		t.Fatalf("%v\nwant the row %+v", o, row)
	}
}
