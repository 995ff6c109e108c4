//go:build unix

package server

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// The figures issue 17 asks for, on the mem store with request and byte
// counting (go test -run '^$' -bench 'V2' -benchtime 1x ./server/):
//
//	BenchmarkV2CatchUp/k=N            gets/op for a reader N generations
//	                                  behind, against bound = 2*log2(N)+4
//	BenchmarkV2History/history=H      a 1 KiB append + commit in a notebook
//	                                  of 1,000 files x 2 KB after H earlier
//	                                  commits: ns/op (history=0 is the
//	                                  reference for the 1.2x target),
//	                                  bytes/op moved (manifest included),
//	                                  current-bytes; and a cold pull
//	                                  (fresh private root) after H commits.

// countingStore counts requests, and the bytes moved under the keys a
// commit itself reads and writes (`current`, increments, segments): the
// background rollups and checkpoints that may overlap are not the
// commit's.
type countingStore struct {
	remote.Store
	in, out atomic.Int64 // bytes read from / written to the store
	gets    atomic.Int64
}

func commitKey(key string) bool {
	return key == remote.CurrentKey || strings.HasPrefix(key, remote.IncrementsPrefix) || strings.HasPrefix(key, remote.SegmentsPrefix)
}

func (c *countingStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	data, etag, err := c.Store.Get(ctx, key)
	if commitKey(key) {
		c.in.Add(int64(len(data)))
	}
	c.gets.Add(1)
	return data, etag, err
}

func (c *countingStore) Head(ctx context.Context, key string) (remote.ObjectInfo, error) {
	c.gets.Add(1)
	return c.Store.Head(ctx, key)
}

func (c *countingStore) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	c.out.Add(int64(len(data))) // only `current` is created
	return c.Store.CreateIfAbsent(ctx, key, data)
}

func (c *countingStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	c.out.Add(int64(len(data)))
	return c.Store.ReplaceIfMatch(ctx, key, data, etag)
}

func (c *countingStore) Put(ctx context.Context, key string, data []byte) error {
	if commitKey(key) {
		c.out.Add(int64(len(data)))
	}
	return c.Store.Put(ctx, key, data)
}

func BenchmarkV2CatchUp(b *testing.B) {
	for _, k := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprint("k=", k), func(b *testing.B) {
			store := &countingStore{Store: memstore.New()}
			w := newAgentTB(b, nil, store)
			r := newAgentTB(b, nil, store)
			ctx := context.Background()
			if _, err := w.e.Pull(ctx, ""); err != nil {
				b.Fatal(err)
			}
			for i := range 8 {
				writeFile(b, filepath.Join(w.dir, fmt.Sprintf("f%d.md", i)), "")
			}
			if _, err := w.e.Commit(ctx, "", "seed"); err != nil {
				b.Fatal(err)
			}
			if _, err := r.e.Pull(ctx, ""); err != nil {
				b.Fatal(err)
			}
			gets := int64(0)
			for b.Loop() {
				b.StopTimer()
				for i := range k {
					appendLine(b, filepath.Join(w.dir, fmt.Sprintf("f%d.md", i%8)), fmt.Sprint("line ", i))
					if _, err := w.e.Commit(ctx, "", "c"); err != nil {
						b.Fatal(err)
					}
				}
				w.e.publishing.Background.Wait()
				before := store.gets.Load()
				b.StartTimer()
				if _, err := r.e.Pull(ctx, ""); err != nil {
					b.Fatal(err)
				}
				gets += store.gets.Load() - before
			}
			b.ReportMetric(float64(gets)/float64(b.N), "gets/op")
			b.ReportMetric(math.Floor(2*math.Log2(float64(k))+4), "bound")
		})
	}
}

func BenchmarkV2History(b *testing.B) {
	store := &countingStore{Store: memstore.New()}
	a := newAgentTB(b, nil, store)
	ctx := context.Background()
	if _, err := a.e.Pull(ctx, ""); err != nil {
		b.Fatal(err)
	}
	line := strings.Repeat("x", 63) + "\n"
	body := strings.Repeat(line, 32)
	old := time.Now().Add(-time.Hour)
	for i := range 1000 {
		p := filepath.Join(a.dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("note-%05d.md", i))
		writeFile(b, p, fmt.Sprintf("# note %d\n%s", i, body))
		os.Chtimes(p, old, old)
	}
	if _, err := a.e.Commit(ctx, "", "seed"); err != nil {
		b.Fatal(err)
	}
	done := 0
	for _, h := range []int{0, 1000, 5000} {
		for ; done < h; done++ {
			appendKiB(b, filepath.Join(a.dir, fmt.Sprintf("d%03d", done%1000/100), fmt.Sprintf("note-%05d.md", done%1000)))
			if _, err := a.e.Commit(ctx, "", "history"); err != nil {
				b.Fatal(err)
			}
		}
		a.e.publishing.Background.Wait()
		b.Run(fmt.Sprint("history=", h), func(b *testing.B) {
			target := filepath.Join(a.dir, "d000", "note-00000.md")
			moved := int64(0)
			for b.Loop() {
				appendKiB(b, target)
				in, out := store.in.Load(), store.out.Load()
				if _, err := a.e.Commit(ctx, "", "append"); err != nil {
					b.Fatal(err)
				}
				moved += store.in.Load() - in + store.out.Load() - out
				b.StopTimer()
				a.e.publishing.Background.Wait() // rollups and checkpoints run between commits
				b.StartTimer()
			}
			b.ReportMetric(float64(moved)/float64(b.N), "bytes/op")
			data, _, err := store.Store.Get(ctx, remote.CurrentKey)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(data)), "current-bytes")
		})
		b.Run(fmt.Sprint("cold-pull-after=", h), func(b *testing.B) {
			gets := int64(0)
			for b.Loop() {
				fresh := newAgentTB(b, nil, store)
				before := store.gets.Load()
				if _, err := fresh.e.Pull(ctx, ""); err != nil {
					b.Fatal(err)
				}
				gets += store.gets.Load() - before
			}
			b.ReportMetric(float64(gets)/float64(b.N), "gets/op")
		})
	}
}

func writeFile(b *testing.B, p, content string) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

func appendLine(b *testing.B, p, line string) {
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		b.Fatal(err)
	}
}
