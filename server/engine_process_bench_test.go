//go:build unix

package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			chunk := strings.Repeat("y", 1023) + "\n"
			cpu := cpuTime()
			for b.Loop() {
				f, _ := os.OpenFile(target, os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString(chunk)
				f.Close()
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
