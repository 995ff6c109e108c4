package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/server"
)

// A store seeded by SeedV4 holds the files at generation 1, and an engine
// that was not asked for version 4 (as the CLI and serve are not) reads
// them and publishes its own commit by version 4: the benchmarks' rows at
// format 4 rely on it.
func TestSeedV4(t *testing.T) {
	ctx := context.Background()
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gen, err := SeedV4(ctx, store, t.TempDir(), map[string][]byte{"a.md": []byte("a\n"), "d/b.md": []byte("b\n")}, "seed")
	if err != nil || gen != 1 {
		t.Fatalf("SeedV4 = %d, %v; want generation 1", gen, err)
	}
	ws := t.TempDir()
	dir := filepath.Join(ws, "notes")
	e, err := server.New(server.Config{Store: store, PrivateRoot: t.TempDir(), WorkspaceRoot: ws, DefaultDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Pull(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "d", "b.md")); err != nil || string(b) != "b\n" {
		t.Fatalf("d/b.md after pull: %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("a\nmore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := e.Commit(ctx, "", "more")
	if err != nil || res.Generation != 2 {
		t.Fatalf("commit: %+v, %v; want generation 2", res, err)
	}
	cur, _, err := store.Get(ctx, remote.CurrentKey)
	if err != nil {
		t.Fatal(err)
	}
	if v := remote.ManifestVersionOf(cur); v != 4 {
		t.Fatalf("current is of version %d after a commit on a version-4 store, not 4", v)
	}
}
