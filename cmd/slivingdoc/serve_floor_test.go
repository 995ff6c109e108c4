package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/remote"
)

// commitFloor returns one run of the writes an uncontended commit must
// make by DESIGN §6, and nothing of the engine's own work (no scan, merge,
// pack or diffstat), on the notebook's own store and private root: the
// read of `current`, the pack upload while the pending record is written
// (temporary file, rename) and the next
// baseline written and fsynced, then the conditional replace and the
// baseline's rename and directory fsync. The keys and files are scratch
// copies, so the notebook is untouched. BenchmarkServe reports it as the
// floor of a commit on this machine, measured alternately with the calls.
func commitFloor(b *testing.B, nb *serveNotebook) func() {
	ctx := context.Background()
	store := floorStore(b, nb)
	current, _, err := store.Get(ctx, remote.CurrentKey)
	if err != nil {
		b.Fatal(err)
	}
	bases, _ := filepath.Glob(filepath.Join(nb.private, "dirs", "*", "baseline"))
	if len(bases) != 1 {
		b.Fatalf("baselines in P: %v", bases)
	}
	baseline, err := os.ReadFile(bases[0])
	if err != nil {
		b.Fatal(err)
	}
	scratch := filepath.Join(nb.private, "bench-floor")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		b.Fatal(err)
	}
	const curKey = "bench-floor/current"
	if _, err := store.CreateIfAbsent(ctx, curKey, current); err != nil {
		b.Fatal(err)
	}
	pack := make([]byte, 4<<10) // a 1 KiB append's pack is about 3.5 KB
	pending := make([]byte, 200)
	n := 0
	return func() {
		n++
		_, etag, err := store.Get(ctx, curKey)
		if err != nil {
			b.Fatal(err)
		}
		recorded := make(chan error, 1)
		go func() {
			err := os.WriteFile(filepath.Join(scratch, ".pending.tmp"), pending, 0o600)
			if err == nil {
				err = os.Rename(filepath.Join(scratch, ".pending.tmp"), filepath.Join(scratch, "pending"))
			}
			recorded <- err
		}()
		prepared := make(chan error, 1)
		go func() { prepared <- writeSynced(filepath.Join(scratch, ".baseline.tmp"), baseline) }()
		if err := store.Put(ctx, fmt.Sprintf("bench-floor/packs/%d", n), pack); err != nil {
			b.Fatal(err)
		}
		if err := <-recorded; err != nil {
			b.Fatal(err)
		}
		if _, err := store.ReplaceIfMatch(ctx, curKey, current, etag); err != nil {
			b.Fatal(err)
		}
		if err := <-prepared; err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(filepath.Join(scratch, ".baseline.tmp"), filepath.Join(scratch, "baseline")); err != nil {
			b.Fatal(err)
		}
		if err := osfile.SyncDir(scratch); err != nil {
			b.Fatal(err)
		}
	}
}

func writeSynced(name string, data []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// floorStore opens the store nb's serve uses, resolved from its
// environment as the serve resolved it.
func floorStore(b *testing.B, nb *serveNotebook) remote.Store {
	env := map[string]string{}
	for _, kv := range nb.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
		if strings.HasPrefix(k, "AWS_") {
			b.Setenv(k, v) // the SDK reads its credentials from the process
		}
	}
	st := addSettingsFlags(flag.NewFlagSet("floor", flag.ContinueOnError))
	st.getenv = func(k string) string { return env[k] }
	spec, err := st.resolveStore()
	if err != nil {
		b.Fatal(err)
	}
	store, err := spec.open(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return store
}
