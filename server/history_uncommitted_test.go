package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// Conflict blocks a pull left are uncommitted work like any edit: a
// restore over them is refused and names the file; an ignored file is
// never a reason to refuse (restore never touches it) and stays as it is,
// even with Force.
func TestRestoreRefusesConflictBlocksKeepsIgnored(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	a := newAgent(t, store, withIgnore([]string{"*.tmp"}, false))
	b := newAgent(t, store)
	a.pull()
	a.write("n.md", "one\n")
	a.commit("seed") // 1
	b.pull()
	b.write("n.md", "one by b\n")
	b.commit("b") // 2
	a.write("n.md", "one by a\n")
	a.write("scratch.tmp", "ignored\n")
	if _, err := a.e.Pull(ctx, ""); err == nil {
		t.Fatal("the pull merged two edits of one line without a conflict")
	}
	blocks := a.read("n.md")

	_, err := a.e.Restore(ctx, "", 1, nil, HistoryWrite{})
	de := domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonUncommittedChanges)
	if len(de.Files) != 1 || de.Files[0].Path != "n.md" || de.Files[0].Reason != diag.FileLocalEdit {
		t.Fatalf("named %+v, want n.md only", de.Files)
	}
	if a.read("n.md") != blocks || a.read("scratch.tmp") != "ignored\n" {
		t.Fatal("a refused restore changed the directory")
	}
	res, err := a.e.Restore(ctx, "", 1, nil, HistoryWrite{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.SavedFiles) != 1 || res.SavedFiles[0] != "n.md" {
		t.Fatalf("saved %v", res.SavedFiles)
	}
	if got, err := os.ReadFile(filepath.Join(res.Saved, "n.md")); err != nil || string(got) != blocks {
		t.Fatalf("the copy %q (%v), want the blocks %q", got, err, blocks)
	}
	if a.read("n.md") != "one\n" || a.read("scratch.tmp") != "ignored\n" {
		t.Fatalf("after the forced restore: n.md %q, scratch.tmp %q", a.read("n.md"), a.read("scratch.tmp"))
	}
}
