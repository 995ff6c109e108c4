//go:build unix

package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

// benchNotebook builds a notebook of n files of 2 KB (in directories of
// 100, like real notes), committed once over the file store, and returns
// its agent with files aged past the racy window.
func benchNotebook(b *testing.B, n int) *agent {
	a, _ := benchNotebookConfig(b, n)
	return a
}

// benchNotebookConfig is benchNotebook that also returns the agent's
// engine configuration (to start more engines on the same directory).
func benchNotebookConfig(b *testing.B, n int) (*agent, Config) {
	b.Helper()
	store, err := filestore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var cfg *Config
	a := newAgentTB(b, nil, store, func(c *Config) { cfg = c })
	if _, err := a.e.Pull(context.Background(), ""); err != nil {
		b.Fatal(err)
	}
	line := strings.Repeat("x", 63) + "\n"
	body := strings.Repeat(line, 32) // 2 KiB
	old := time.Now().Add(-time.Hour)
	for i := range n {
		p := filepath.Join(a.dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("note-%05d.md", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("# note %d\n%s", i, body)), 0o644); err != nil {
			b.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	if _, err := a.e.Commit(context.Background(), "", "seed"); err != nil {
		b.Fatal(err)
	}
	if _, err := a.e.Pull(context.Background(), ""); err != nil { // warm the stat cache
		b.Fatal(err)
	}
	return a, *cfg
}

// BenchmarkCommitAppend: append 1 KiB to one file and commit (DESIGN §10:
// ≤ 30 ms at 1,000 files, ≤ 100 ms at 10,000, whole CLI process).
func BenchmarkCommitAppend(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a := benchNotebook(b, n)
			target := filepath.Join(a.dir, "d000", "note-00000.md")
			b.ResetTimer()
			cpu := cpuTime()
			for b.Loop() {
				appendKiB(b, target)
				if _, err := a.e.Commit(context.Background(), "", "append"); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkNoopPull10000: a pull with nothing to do on 10,000 files.
func BenchmarkNoopPull10000(b *testing.B) {
	a := benchNotebook(b, 10000)
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := a.e.Pull(context.Background(), ""); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkNoopCommit10000: a commit with nothing to publish on 10,000
// files. Like the no-op pull it sends one request; beyond the pull it
// compares L with A.
func BenchmarkNoopCommit10000(b *testing.B) {
	a := benchNotebook(b, 10000)
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := a.e.Commit(context.Background(), "", "noop"); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// cpuTime is the process's user+system CPU time: on a shared machine it
// says more about the engine's cost than wall time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// appendKiB appends a 1 KiB line to the file at p.
func appendKiB(b *testing.B, p string) {
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Repeat("y", 1023) + "\n"); err != nil {
		b.Fatal(err)
	}
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkColdPullAfterHistory: a new directory (fresh private root)
// pulls 1,000 files after 200 commits (DESIGN §10: ≤ 0.6 s), and a 1 KiB
// append + commit after that history (within 1.2x of the first commits).
func BenchmarkColdPullAfterHistory(b *testing.B) {
	a := benchNotebook(b, 1000)
	target := filepath.Join(a.dir, "d000", "note-00000.md")
	for i := range 200 {
		// benchNotebook puts note i in d<i/100>.
		appendKiB(b, filepath.Join(a.dir, fmt.Sprintf("d%03d", i*5/100), fmt.Sprintf("note-%05d.md", i*5)))
		if _, err := a.e.Commit(context.Background(), "", "history"); err != nil {
			b.Fatal(err)
		}
	}
	// cache-files/op: the files the pull created in its object cache.
	b.Run("cold-pull", func(b *testing.B) {
		cpu := cpuTime()
		files := 0
		for b.Loop() {
			var priv string
			fresh := newAgentTB(b, nil, a.e.env.Store, func(c *Config) { priv = c.PrivateRoot })
			if _, err := fresh.e.Pull(context.Background(), ""); err != nil {
				b.Fatal(err)
			}
			files += cacheFiles(b, priv)
		}
		reportCPU(b, cpu)
		b.ReportMetric(float64(files)/float64(b.N), "cache-files/op")
	})
	b.Run("commit-after-200", func(b *testing.B) {
		cpu := cpuTime()
		for b.Loop() {
			appendKiB(b, target)
			if _, err := a.e.Commit(context.Background(), "", "append"); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
}
