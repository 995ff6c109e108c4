//go:build unix

package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

// BenchmarkLongLived: the calls of a long-lived engine (serve) on 10,000
// files (SLIVINGDOC_BENCH_FILES),  in process: a 1 KiB append + commit, a no-op commit and a no-op
// pull. cmd/slivingdoc's BenchmarkServe measures the same through the
// binary against git status.
func BenchmarkLongLived(b *testing.B) {
	store, err := filestore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	a := newAgentTB(b, nil, store, func(c *Config) { c.LongLived = true })
	ctx := context.Background()
	if _, err := a.e.Pull(ctx, ""); err != nil {
		b.Fatal(err)
	}
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("SLIVINGDOC_BENCH_FILES")); err == nil && v > 0 {
		n = v // as in cmd/slivingdoc's BenchmarkServe
	}
	old := time.Now().Add(-time.Hour)
	for i := range n {
		p := filepath.Join(a.dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("e%02d", (i/50)%20), fmt.Sprintf("note-%05d.md", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("# note %d\n\n%s", i, strings.Repeat("text\n", 20))), 0o644); err != nil {
			b.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	if _, err := a.e.Commit(ctx, "", "seed"); err != nil {
		b.Fatal(err)
	}
	target := filepath.Join(a.dir, "d00", "e00", "note-00000.md")
	b.Run("commit-1KiB", func(b *testing.B) {
		for b.Loop() {
			appendKiB(b, target)
			if _, err := a.e.Commit(ctx, "", "append"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("noop-commit", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.e.Commit(ctx, "", "noop"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("noop-pull", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.e.Pull(ctx, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}
