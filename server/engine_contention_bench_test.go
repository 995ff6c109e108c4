//go:build unix

package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

// racingStore lets a rival commit just before each of the first `lose`
// conditional replaces of `current` in a call, so the call loses the race
// that many times (as writers on one notebook do) and then wins. The
// rival's CPU is counted apart: it is another process in real use.
type racingStore struct {
	remote.Store
	rival    func()
	lose     int
	left     int
	rivalCPU time.Duration
}

func (s *racingStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if key == remote.CurrentKey && s.left > 0 {
		s.left--
		start := cpuTime()
		s.rival()
		s.rivalCPU += cpuTime() - start
	}
	return s.Store.ReplaceIfMatch(ctx, key, data, etag)
}

// BenchmarkProcessCommitContended: a 1 KiB append to a small notebook
// (20 files, as in the contention runs) committed by a fresh Engine whose
// first two publication attempts lose the race to a writer of another
// file: three builds, two merges with the rival's change, three packs.
func BenchmarkProcessCommitContended(b *testing.B) {
	files, err := filestore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	store := &racingStore{Store: files, lose: 2}
	var cfg *Config
	a := newAgentTB(b, nil, store, func(c *Config) { cfg = c })
	rival := newAgentTB(b, nil, files)
	ctx := context.Background()
	seedSmallNotebook(b, ctx, a, rival)
	store.rival = func() {
		appendKiB(b, filepath.Join(rival.dir, "note-19.md"))
		if _, err := rival.e.Commit(ctx, "", "rival"); err != nil {
			b.Fatal(err)
		}
	}
	target := filepath.Join(a.dir, "note-00.md")
	cpu := cpuTime()
	for b.Loop() {
		appendKiB(b, target)
		store.left = store.lose
		processCall(b, *cfg, func(e *Engine) error { _, err := e.Commit(ctx, "", "append"); return err })
		if store.left != 0 {
			b.Fatal("the rival did not commit first")
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu-store.rivalCPU)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// seedSmallNotebook is the notebook of the contention runs: a commits 20
// notes of about 2 KB and rival pulls them (both pull first).
func seedSmallNotebook(b *testing.B, ctx context.Context, a, rival *agent) {
	for _, ag := range []*agent{a, rival} {
		if _, err := ag.e.Pull(ctx, ""); err != nil {
			b.Fatal(err)
		}
	}
	line := strings.Repeat("x", 63) + "\n"
	for i := range 20 {
		p := filepath.Join(a.dir, fmt.Sprintf("note-%02d.md", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("# note %d\n%s", i, strings.Repeat(line, 32))), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := a.e.Commit(ctx, "", "seed"); err != nil {
		b.Fatal(err)
	}
	if _, err := rival.e.Pull(ctx, ""); err != nil {
		b.Fatal(err)
	}
}
