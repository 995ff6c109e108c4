package server

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
)

// A writer that finds `current` moved by another writer since its own
// last commit (within remote.ContentionWindow) is in contention: its
// first attempt registers and leads the generation's group at once
// (descriptor PUT, lead marker HEAD and CREATE, LIST) instead of racing
// it with three requests. The memory lives in P, so the next CLI process
// of the same writer sees it; a lone writer committing in a row stays at
// three requests (TestGroupCommitUncontendedThreeRequests).
func TestGroupCommitContendedFirstAttemptRegisters(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, withGroupCommit())
	b := newAgent(t, store, withGroupCommit())
	a.pull()
	a.write("a.md", "one\n")
	a.commit("seed")
	b.pull()
	b.write("b.md", "b\n")
	b.commit("b")
	if _, err := os.Stat(filepath.Join(a.e.private, "stores", a.e.storeKey, "contention")); err != nil {
		t.Fatalf("the contention memory is not in P: %v", err)
	}
	ops := []memstore.Op{memstore.OpCreate, memstore.OpReplace, memstore.OpPut, memstore.OpList}
	before := map[memstore.Op]int{}
	for _, op := range ops {
		before[op] = store.Calls(op)
	}
	a.appendTo("a.md", "two\n")
	res := a.commit("append")
	got := map[memstore.Op]int{}
	for _, op := range ops {
		got[op] = store.Calls(op) - before[op]
	}
	// pack + descriptor, lead marker, the group's LIST, one write.
	want := map[memstore.Op]int{memstore.OpPut: 2, memstore.OpCreate: 1, memstore.OpList: 1, memstore.OpReplace: 1}
	if !maps.Equal(got, want) {
		t.Fatalf("requests %v, want %v (a registering first attempt)", got, want)
	}
	if res.Generation != 3 {
		t.Fatalf("generation %d, want 3", res.Generation)
	}
	keys, err := store.List(t.Context(), "proposals/")
	if err != nil || len(keys) != 2 || !strings.HasSuffix(keys[1].Key, "-lead") {
		t.Fatalf("proposals after the commit: %v, %v (want its descriptor and the lead marker on generation 2)", keys, err)
	}
	a.pull()
	if got := a.read("b.md"); got != "b\n" {
		t.Fatalf("b.md = %q", got)
	}
}

// A malformed or foreign memory file reads as "no contention" (the
// commit races first, as without group commit) and is rewritten.
func TestContentionFileIsAHint(t *testing.T) {
	dir := t.TempDir()
	m := newContentionFile(dir)
	if r := m.Load(); !r.Published.IsZero() || r.Generation != 0 {
		t.Fatalf("missing file loaded as %+v", r)
	}
	for _, junk := range []string{"", "2 1 2 3\n", "1 x 2 3\n", "garbage"} {
		if err := os.WriteFile(filepath.Join(dir, "contention"), []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := m.Load(); !r.Published.IsZero() || !r.Contended.IsZero() || r.Generation != 0 {
			t.Fatalf("%q loaded as %+v", junk, r)
		}
	}
}
