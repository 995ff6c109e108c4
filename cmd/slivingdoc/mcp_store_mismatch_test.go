package main

import (
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

// serve's store is fixed at start-up; a directory pulled from another
// store is refused, as on the CLI, instead of mixing two notebooks.
func rowStoreMismatch(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	a.pull()
	a.write("plan.md", "mine\n")
	a.commit("one")
	a.write("plan.md", "mine\nlocal edit\n")
	before := a.files()
	s := a.serve("--store", "file://"+filepath.ToSlash(filepath.Join(filepath.Dir(a.dir), "elsewhere")))
	for _, r := range []result{s.call(ToolPullName, map[string]any{}), s.call(ToolCommitName, map[string]any{"message": "m"})} {
		wantRow(t, r, row)
		wantNoFiles(t, r)
	}
	if got := a.files(); len(got) != len(before) || got["plan.md"] != before["plan.md"] {
		t.Fatalf("a refused call changed the directory: %q", got)
	}
}
