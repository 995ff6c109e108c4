//go:build unix

package server

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkProcessCommitAppend is BenchmarkCommitAppend with a fresh
// Engine per call, as one CLI process has: the object cache is opened and
// the private state loaded every time, which the long-lived engine of the
// other benchmarks amortises away. Profile it to see what a CLI commit
// costs beyond process start.
func BenchmarkProcessCommitAppend(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a, cfg := benchNotebookConfig(b, n)
			target := filepath.Join(a.dir, "d000", "note-00000.md")
			cpu := cpuTime()
			for b.Loop() {
				appendKiB(b, target)
				processCall(b, cfg, func(e *Engine) error { _, err := e.Commit(context.Background(), "", "append"); return err })
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkProcessNoopCommit10000: a commit with nothing to publish on
// 10,000 files, fresh Engine per call (DESIGN §10: <= 2x git status).
func BenchmarkProcessNoopCommit10000(b *testing.B) {
	_, cfg := benchNotebookConfig(b, 10000)
	cpu := cpuTime()
	for b.Loop() {
		processCall(b, cfg, func(e *Engine) error { _, err := e.Commit(context.Background(), "", "noop"); return err })
	}
	reportCPU(b, cpu)
}

func processCall(b *testing.B, cfg Config, call func(*Engine) error) {
	b.Helper()
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := call(e); err != nil {
		b.Fatal(err)
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkProcessNoopPull10000 is the pull twin of
// BenchmarkProcessNoopCommit10000: both send one request, so their CPU
// should differ by little.
func BenchmarkProcessNoopPull10000(b *testing.B) {
	_, cfg := benchNotebookConfig(b, 10000)
	cpu := cpuTime()
	for b.Loop() {
		processCall(b, cfg, func(e *Engine) error { _, err := e.Pull(context.Background(), ""); return err })
	}
	reportCPU(b, cpu)
}

// BenchmarkProcessNoopAfterAppend is the load generator's round on 10,000
// files: append 1 KiB and commit, then a no-op commit, then a no-op pull,
// each a fresh Engine. The no-op calls follow a commit that read a file
// written moments before, as they do in real use.
func BenchmarkProcessNoopAfterAppend(b *testing.B) {
	_, cfg := benchNotebookConfig(b, 10000)
	target := filepath.Join(cfg.DefaultDir, "d000", "note-00000.md")
	var commitCPU, noopCommitCPU, noopPullCPU time.Duration
	for b.Loop() {
		appendKiB(b, target)
		start := cpuTime()
		processCall(b, cfg, func(e *Engine) error { _, err := e.Commit(context.Background(), "", "append"); return err })
		mid := cpuTime()
		processCall(b, cfg, func(e *Engine) error { _, err := e.Commit(context.Background(), "", "noop"); return err })
		end := cpuTime()
		processCall(b, cfg, func(e *Engine) error { _, err := e.Pull(context.Background(), ""); return err })
		commitCPU += mid - start
		noopCommitCPU += end - mid
		noopPullCPU += cpuTime() - end
	}
	per := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(per(commitCPU), "commit-cpu-ms/op")
	b.ReportMetric(per(noopCommitCPU), "noop-commit-cpu-ms/op")
	b.ReportMetric(per(noopPullCPU), "noop-pull-cpu-ms/op")
}
