package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
	"github.com/slivingdoc/slivingdoc/server"
)

// With --checkpoint-packs 5, three processes commit 20 times each. Every
// commit succeeds (checkpoints run beside them and never fail them),
// checkpoints are swapped in, a fresh directory's cold pull downloads the
// checkpoint and the tail only, and verify finds the store whole.
func TestCLICheckpointsUnderConcurrentWriters(t *testing.T) {
	const writers, commits, threshold = 3, 20, 5
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		store := openTestStore(t, nb.env)
		env := []string{fmt.Sprint("SLIVINGDOC_CHECKPOINT_PACKS=", threshold)}

		// Watch the tail while the writers run.
		var maxTail atomic.Int64
		stop := make(chan struct{})
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			nbk := remote.Open(store, remote.Options{})
			for {
				if st, err := nbk.ReadCurrent(context.Background()); err == nil && st.Manifest != nil {
					if n := int64(st.Manifest.ActiveLength()); n > maxTail.Load() {
						maxTail.Store(n)
					}
				}
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()

		var wg sync.WaitGroup
		errs := make(chan string, writers)
		for i := range writers {
			a := nb.agent(fmt.Sprint("w", i))
			wg.Go(func() {
				if o := a.runEnv(env, "pull", a.dir); o.code != 0 {
					errs <- o.String()
					return
				}
				name := fmt.Sprintf("w%d.md", i)
				var content strings.Builder
				for j := range commits {
					fmt.Fprintf(&content, "writer %d line %d\n", i, j)
					a.write(name, content.String())
					if o := a.runEnv(env, "commit", a.dir, "-m", fmt.Sprintf("w%d c%d", i, j)); o.code != 0 {
						errs <- o.String()
						return
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		<-watched
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		if t.Failed() {
			return
		}

		st, err := remote.Open(store, remote.Options{}).ReadCurrent(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		mf := st.Manifest
		// A checkpoint takes no generation of its own (a fold copies it
		// into `current`): every generation is a commit's.
		if mf.Generation != writers*commits {
			t.Fatalf("generation %d after %d commits", mf.Generation, writers*commits)
		}
		if mf.Checkpoint.IsGenesis() {
			t.Fatalf("no checkpoint after %d commits", writers*commits)
		}
		// How long the tail grew while the writers ran is logged, not
		// asserted: a checkpoint is built in the background and enters
		// `current` with the next fold that LISTs, so the tail it leaves
		// depends on how fast the builder runs beside the writers (on a
		// loaded machine, without bound). What the user relies on is
		// asserted: checkpoints were made and taken, and a cold pull reads
		// the checkpoint and the tail only (below).
		active := mf.ActiveLength()
		t.Logf("%s: active checkpoint through %d, longest tail observed %d, final tail %d", nb.backend, mf.Checkpoint.Through, maxTail.Load(), active)

		// Cold pull in a fresh private root, counting what it downloads.
		counted := &countingStore{Store: store}
		gets := coldPull(t, counted)
		// Version 2: the checkpoint, then rollups and increments covering
		// the tail, never more packs than the tail has increments. Every
		// rollup asked for exists: the plan stops at the head's generation,
		// so a block that ends at a later checkpoint swap (built only by
		// the next publication) is never asked for.
		var cps, incs int
		for _, k := range gets {
			switch {
			case strings.HasPrefix(k, remote.CheckpointsPrefix):
				cps++
			case strings.HasPrefix(k, remote.IncrementsPrefix), strings.HasPrefix(k, remote.RollupsPrefix):
				incs++
			}
		}
		if n := counted.notFound(); n != 0 {
			t.Errorf("cold pull asked for %d objects the store does not have: %v", n, gets)
		}
		if cps != 1 || incs > active {
			t.Errorf("cold pull fetched %d checkpoints and %d increments or rollups; the active chain is 1 checkpoint and %d increments: %v (through %d, generation %d)", cps, incs, active, gets, mf.Checkpoint.Through, mf.Generation)
		}

		a := nb.agent("verifier")
		o := a.runEnv(env, "verify", "--json")
		var rep verifyJSON
		if o.code != 0 || json.Unmarshal([]byte(o.stdout), &rep) != nil || !rep.OK || rep.Generation != mf.Generation {
			t.Fatalf("verify after the run: %s", o)
		}
	})
}

// coldPull pulls the notebook into a fresh directory with a fresh private
// root through store and returns the keys it read with GET.
func coldPull(t *testing.T, store *countingStore) []string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "notes")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e, err := server.New(server.Config{Store: store, PrivateRoot: filepath.Join(base, "private"), WorkspaceRoot: dir, CheckpointPacks: 5, RetainedCheckpoints: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	store.reset()
	if _, err := e.Pull(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return store.keys()
}

// countingStore records every key read with Get.
type countingStore struct {
	remote.Store
	mu    sync.Mutex
	gets  []string
	bytes int64
	miss  int // GETs answered "not found"
}

func (c *countingStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	data, etag, err := c.Store.Get(ctx, key)
	c.mu.Lock()
	c.gets = append(c.gets, key)
	c.bytes += int64(len(data))
	if errors.Is(err, remote.ErrNotFound) {
		c.miss++
	}
	c.mu.Unlock()
	return data, etag, err
}

func (c *countingStore) notFound() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.miss
}

func (c *countingStore) reset() {
	c.mu.Lock()
	c.gets, c.bytes, c.miss = nil, 0, 0
	c.mu.Unlock()
}

func (c *countingStore) keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.gets...)
}

// openTestStore opens, in the test process, the store a notebook's
// environment selects (file:// or the SeaweedFS bucket).
func openTestStore(t *testing.T, env []string) remote.Store {
	t.Helper()
	get := func(k string) string {
		for _, kv := range env {
			if key, v, ok := strings.Cut(kv, "="); ok && key == k {
				return v
			}
		}
		return ""
	}
	if dir, ok := strings.CutPrefix(get("SLIVINGDOC_STORE"), "file://"); ok {
		s, err := filestore.New(filepath.FromSlash(dir))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s, err := s3store.New(context.Background(), s3store.Config{
		Bucket: get("SLIVINGDOC_BUCKET"), Prefix: "slivingdoc", Region: get("AWS_REGION"),
		Endpoint: get("AWS_ENDPOINT_URL_S3"), PathStyle: true,
		AccessKeyID: get("AWS_ACCESS_KEY_ID"), SecretAccessKey: get("AWS_SECRET_ACCESS_KEY"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
