//go:build unix

package server

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

// BenchmarkCommitAfterOthers: a commit process (a fresh Engine) on a small
// notebook (20 files) that another writer committed to k times since its
// last sync, as under k+1 writers: it fetches k increment packs, then
// commits a 1 KiB append. The rival's commits are not counted.
//
// Metrics: cpu-ms/op and wall-ms/op of the commit process, cache-files/op
// created in its object cache.
func BenchmarkCommitAfterOthers(b *testing.B) {
	for _, k := range []int{10, 49} {
		b.Run(fmt.Sprint(k), func(b *testing.B) {
			store, err := filestore.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			var cfg *Config
			// No checkpoint: every sync fetches increments only.
			a := newAgentTB(b, nil, store, noCheckpoints, func(c *Config) { cfg = c })
			rival := newAgentTB(b, nil, store, noCheckpoints)
			ctx := context.Background()
			seedSmallNotebook(b, ctx, a, rival)
			var cpu, wall time.Duration
			files := 0
			for b.Loop() {
				b.StopTimer()
				for range k {
					appendKiB(b, filepath.Join(rival.dir, "note-19.md"))
					if _, err := rival.e.Commit(ctx, "", "rival"); err != nil {
						b.Fatal(err)
					}
				}
				appendKiB(b, filepath.Join(a.dir, "note-00.md"))
				before := cacheFiles(b, cfg.PrivateRoot)
				b.StartTimer()
				c, w := cpuTime(), time.Now()
				processCall(b, *cfg, func(e *Engine) error { _, err := e.Commit(ctx, "", "append"); return err })
				cpu, wall = cpu+cpuTime()-c, wall+time.Since(w)
				files += cacheFiles(b, cfg.PrivateRoot) - before
			}
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(wall)/float64(time.Millisecond)/float64(b.N), "wall-ms/op")
			b.ReportMetric(float64(files)/float64(b.N), "cache-files/op")
		})
	}
}

// noCheckpoints keeps every commit an increment of the one chain.
func noCheckpoints(c *Config) { c.CheckpointPacks = 1 << 30 }
