//go:build unix

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// BenchmarkBurstRewrite is the file-system work alone of the 100-agent
// burst (DESIGN §10, issue 18): each of 100 agents has its own directory L
// holding one file per agent, and its commit must write the 99 files the
// other agents changed into L. One op is the whole burst's rewrites, every
// directory through workdir.WriteFiles as the engine does it (a temporary
// file per path renamed over it, one syncfs per directory), two
// directories at a time as two cores run them; nothing else of a commit
// (no scan, merge, store or pack). So ms/op is a floor under the burst's
// "last accepted" on the temp dir's file system, and cpu-ms/op what the
// rewrites cost the cores. Run it with TMPDIR on the file system the agents'
// directories live on.
func BenchmarkBurstRewrite(b *testing.B) {
	const agents, workers = 100, 2
	base := b.TempDir()
	roots := make([]*os.Root, agents)
	for a := range agents {
		dir := filepath.Join(base, fmt.Sprintf("agent-%03d", a))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range agents {
			if err := os.WriteFile(filepath.Join(dir, burstFile(f)), NoteText(f, 2048), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		r, err := os.OpenRoot(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		roots[a] = r
	}
	round := 0
	cpu := cpuTime()
	for b.Loop() {
		round++
		next := make(chan int, agents)
		for a := range agents {
			next <- a
		}
		close(next)
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for a := range next {
					if err := rewriteOthers(roots[a], a, agents, round); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
}

// rewriteOthers writes every agent's file but a's own into a's directory,
// each one line longer than the round before.
func rewriteOthers(r *os.Root, a, agents, round int) error {
	var writes []workdir.Write
	for f := range agents {
		if f == a {
			continue
		}
		name := burstFile(f)
		fi, err := r.Lstat(name)
		if err != nil {
			return err
		}
		was := workdir.StatOf(fi)
		content := append(NoteText(f, 2048), fmt.Sprintf("round %d of agent %d\n", round, f)...)
		writes = append(writes, workdir.Write{Path: name, Content: content, Was: &was})
	}
	return workdir.WriteFiles(r, writes, func(int, workdir.Entry) error { return nil })
}

func burstFile(f int) string { return fmt.Sprintf("agent-%03d.md", f) }
