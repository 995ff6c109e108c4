//go:build unix

package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	a.e.publishing.Background.Wait() // the seed's checkpoint is not the calls' work
	target := filepath.Join(a.dir, "d00", "e00", "note-00000.md")
	b.Run("commit-1KiB", func(b *testing.B) {
		measureCalls(b, func() error {
			appendKiB(b, target)
			_, err := a.e.Commit(ctx, "", "append")
			return err
		})
	})
	b.Run("noop-commit", func(b *testing.B) {
		measureCalls(b, func() error { _, err := a.e.Commit(ctx, "", "noop"); return err })
	})
	b.Run("noop-pull", func(b *testing.B) {
		measureCalls(b, func() error { _, err := a.e.Pull(ctx, ""); return err })
	})
}

// measureCalls runs call once per iteration and reports, beside the mean,
// the median wall time (median-ms) and the process's CPU time per call
// (cpu-ms, background work included): on a shared machine the CPU is the
// steadier figure, the median the one a caller waits.
func measureCalls(b *testing.B, call func() error) {
	var walls []time.Duration
	cpu := cpuTime()
	for b.Loop() {
		start := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		walls = append(walls, time.Since(start))
	}
	cpu = cpuTime() - cpu
	slices.Sort(walls)
	b.ReportMetric(float64(walls[len(walls)/2])/1e6, "median-ms")
	b.ReportMetric(float64(cpu)/float64(len(walls))/1e6, "cpu-ms")
}
