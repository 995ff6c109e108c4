package server

import (
	"context"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// A path that is a file on one side and a directory on the other is a
// FILE_DIRECTORY conflict: reported, nothing lost, nothing published.
func TestFileDirectoryConflict(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("seed.md", "s\n")
	a.commit("seed")
	b.pull()
	a.write("topic", "a file\n")
	a.commit("topic as a file")
	b.write("topic/inner.md", "in a directory\n")

	_, err := b.e.Commit(context.Background(), "", "topic as a directory")
	de := domainErr(t, err, diag.CodeContentConflict, diag.ReasonMergeConflict)
	found := false
	for _, f := range de.Files {
		if f.Reason == "FILE_DIRECTORY" && len(f.Ranges) == 0 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no FILE_DIRECTORY conflict in %v", fileReasons(de))
	}
	if got := b.read("topic/inner.md"); got != "in a directory\n" {
		t.Fatalf("local file lost: %q", got)
	}
	if gen := newAgent(t, store).pull().Generation; gen != 2 {
		t.Fatalf("generation %d: a conflicting commit published", gen)
	}
}
