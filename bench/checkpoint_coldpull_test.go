package bench

// Cold pull after a long history, with and without checkpoints: two file
// stores receive the same 2,000 commits through the engine (20 notes, each
// commit appends a line to one), one with --checkpoint-packs 64 and one
// with checkpoints off. Each iteration pulls both into a fresh directory
// with a fresh private root (the probe verdict is proved untimed first, as
// a host that has used the store before would have it) and counts the
// GETs and bytes downloaded.
//
//	go test -run '^$' -bench CheckpointColdPull -benchtime 5x ./bench/
//
// ns/op also counts the engine set-up and probe of the timed pull; the
// metrics are the pulls alone. Building the two histories takes a few
// minutes on 2 shared cores (4,000 fsynced commits).
//
// Metrics: ms/with and ms/without (medians), x-time (without / with),
// KiB/with and KiB/without, x-bytes (without / with), gets/with and
// gets/without.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/server"
)

const (
	coldPullCommits   = 2000
	coldPullThreshold = 64
	coldPullNotes     = 20
)

func BenchmarkCheckpointColdPull(b *testing.B) {
	with := coldPullHistory(b, coldPullThreshold)
	without := coldPullHistory(b, 1<<30)

	var tWith, tWithout []time.Duration
	var bytesWith, bytesWithout int64
	var getsWith, getsWithout int
	for b.Loop() {
		d, n, g := coldPullOnce(b, with)
		tWith, bytesWith, getsWith = append(tWith, d), n, g
		b.StopTimer()
		d, n, g = coldPullOnce(b, without)
		tWithout, bytesWithout, getsWithout = append(tWithout, d), n, g
		b.StartTimer()
	}
	mw, mo := median(tWith), median(tWithout)
	b.ReportMetric(float64(mw.Microseconds())/1000, "ms/with")
	b.ReportMetric(float64(mo.Microseconds())/1000, "ms/without")
	b.ReportMetric(float64(mo)/float64(mw), "x-time")
	b.ReportMetric(float64(bytesWith)/1024, "KiB/with")
	b.ReportMetric(float64(bytesWithout)/1024, "KiB/without")
	b.ReportMetric(float64(bytesWithout)/float64(bytesWith), "x-bytes")
	b.ReportMetric(float64(getsWith), "gets/with")
	b.ReportMetric(float64(getsWithout), "gets/without")
}

// coldPullHistory makes a file store with coldPullCommits commits made by
// one engine with the given checkpoint threshold.
func coldPullHistory(b *testing.B, threshold int) remote.Store {
	b.Helper()
	base := b.TempDir()
	store, err := filestore.New(filepath.Join(base, "store"))
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(base, "notes")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	e, err := server.New(server.Config{Store: store, PrivateRoot: filepath.Join(base, "private"), WorkspaceRoot: dir,
		CheckpointPacks: threshold, RetainedCheckpoints: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if _, err := e.Pull(ctx, dir); err != nil {
		b.Fatal(err)
	}
	for i := range coldPullCommits {
		p := filepath.Join(dir, fmt.Sprintf("note-%02d.md", i%coldPullNotes))
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintf(f, "entry %d: a line of a note that keeps growing, as a log of work does\n", i)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Commit(ctx, dir, fmt.Sprint("entry ", i)); err != nil {
			b.Fatalf("commit %d: %v", i, err)
		}
	}
	return store
}

// coldPullOnce pulls store into a fresh directory and private root and
// returns the pull's wall time, the bytes and the number of GETs.
func coldPullOnce(b *testing.B, store remote.Store) (time.Duration, int64, int) {
	b.Helper()
	base := b.TempDir()
	dir := filepath.Join(base, "notes")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	counted := &getCounter{Store: store}
	e, err := server.New(server.Config{Store: counted, PrivateRoot: filepath.Join(base, "private"), WorkspaceRoot: dir, CheckpointPacks: coldPullThreshold, RetainedCheckpoints: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := e.Probe(context.Background()); err != nil {
		b.Fatal(err)
	}
	counted.reset()
	start := time.Now()
	if _, err := e.Pull(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	n, g := counted.totals()
	return d, n, g
}

// getCounter counts GET requests and the bytes they return.
type getCounter struct {
	remote.Store
	mu    sync.Mutex
	gets  int
	bytes int64
}

func (c *getCounter) Get(ctx context.Context, key string) ([]byte, string, error) {
	data, etag, err := c.Store.Get(ctx, key)
	c.mu.Lock()
	c.gets++
	c.bytes += int64(len(data))
	c.mu.Unlock()
	return data, etag, err
}

func (c *getCounter) reset() {
	c.mu.Lock()
	c.gets, c.bytes = 0, 0
	c.mu.Unlock()
}

func (c *getCounter) totals() (int64, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.gets
}
