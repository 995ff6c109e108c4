package server

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

// A change committed in one directory reaches another directory (its own
// private root, as on another host) with its exact bytes, and results
// report the generation and per-file line deltas.
func TestRoundTrip(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			a, b := newAgent(t, store), newAgent(t, store)
			if res := a.pull(); res.Generation != 0 || len(res.Files) != 0 || res.Path != a.dir {
				t.Fatalf("first pull of an empty notebook: %+v", res)
			}
			a.write("a.md", "one\ntwo\n")
			a.write("sub/dir/b.md", "no final newline")
			a.write("crlf.md", "x\r\ny\r\n")
			res := a.commit("first")
			if res.Generation != 1 {
				t.Fatalf("generation %d, want 1", res.Generation)
			}
			equalMaps(t, "commit diffstat", stats(res.Files), map[string][2]int{
				"a.md": {2, 0}, "sub/dir/b.md": {1, 0}, "crlf.md": {2, 0},
			})

			res = b.pull()
			if res.Generation != 1 {
				t.Fatalf("b pulled generation %d", res.Generation)
			}
			equalMaps(t, "b's files", b.files(), a.files())
			equalMaps(t, "pull diffstat", stats(res.Files), map[string][2]int{
				"a.md": {2, 0}, "sub/dir/b.md": {1, 0}, "crlf.md": {2, 0},
			})

			// Modify, delete (its directory empties and goes), add.
			b.write("a.md", "one\nTWO\nthree\n")
			b.remove("sub/dir/b.md")
			b.write("new.md", "n\n")
			res = b.commit("second")
			if res.Generation != 2 {
				t.Fatalf("generation %d, want 2", res.Generation)
			}
			equalMaps(t, "commit diffstat", stats(res.Files), map[string][2]int{
				"a.md": {2, 1}, "sub/dir/b.md": {0, 1}, "new.md": {1, 0},
			})

			res = a.pull()
			equalMaps(t, "a after pull", a.files(), b.files())
			if _, err := lstat(a.path("sub")); err == nil {
				t.Fatalf("emptied directory sub/ was not removed")
			}
			if res.Generation != 2 || len(res.Files) != 3 {
				t.Fatalf("pull result %+v", res)
			}

			// Nothing changed anywhere: both calls are no-ops.
			if res := a.pull(); len(res.Files) != 0 || res.Generation != 2 {
				t.Fatalf("no-op pull %+v", res)
			}
			if res := a.commit("nothing"); len(res.Files) != 0 || res.Generation != 2 {
				t.Fatalf("no-op commit %+v", res)
			}
		})
	}
}

// stores returns the backends the engine tests run on.
func stores(t *testing.T) map[string]remote.Store {
	t.Helper()
	file, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]remote.Store{"mem": memstore.New(), "file": file}
}
