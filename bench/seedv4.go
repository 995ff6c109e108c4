package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server"
)

// SeedV4 makes store a format-version-4 notebook holding files, by its
// first commit: an engine in this process pulls the empty store, writes
// files and commits them (every commit publishes by version 4). It seeds
// without a slivingdoc binary, in the benchmark's own process. scratch is
// a directory of the caller's (it holds the engine's workspace and
// private root and may be removed afterwards).
// It returns the generation of the seed commit and fails unless the
// store's `current` is then of version 4.
func SeedV4(ctx context.Context, store remote.Store, scratch string, files map[string][]byte, message string) (uint64, error) {
	ws, priv := filepath.Join(scratch, "ws"), filepath.Join(scratch, "private")
	dir := filepath.Join(ws, "notes")
	for _, d := range []string{dir, priv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, err
		}
	}
	e, err := server.New(server.Config{Store: store, PrivateRoot: priv, WorkspaceRoot: ws, DefaultDir: dir})
	if err != nil {
		return 0, err
	}
	defer e.Close()
	if _, err := e.Pull(ctx, ""); err != nil {
		return 0, fmt.Errorf("seed v4: pull: %w", err)
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return 0, err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return 0, err
		}
	}
	res, err := e.Commit(ctx, "", message)
	if err != nil {
		return 0, fmt.Errorf("seed v4: commit: %w", err)
	}
	cur, _, err := store.Get(ctx, remote.CurrentKey)
	if err != nil {
		return 0, fmt.Errorf("seed v4: read current: %w", err)
	}
	if v := remote.ManifestVersionOf(cur); v != 4 {
		return 0, fmt.Errorf("seed v4: the store's current is of version %d after the seed commit, not 4", v)
	}
	return res.Generation, nil
}
