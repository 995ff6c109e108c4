package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// baseGoneScene: stale pulled shared.md and edited it locally; a then
// changed it and committed past several checkpoints, so stale's base is
// in no chain the active one reaches, and a sweep ran (which, outside
// --retain, deletes the history below the oldest listed checkpoint: a
// small window, K = M = 4, and a checkpoint every 8 generations let 40
// commits reach it); then stale's object cache is removed (healing
// dropped a damaged bundle, an operator cleared it, the disk lost it):
// the base content of its edited file is in no cache.
func baseGoneScene(t *testing.T, retainFor time.Duration) (store *memstore.Mem, a, stale *agent) {
	t.Helper()
	store = memstore.New()
	opts := []agentOpt{withCheckpoints(8, 1), func(c *Config) { c.Retain = retainFor }}
	a, stale = retainV4Agent(t, store, opts...), retainV4Agent(t, store, opts...)
	a.pull()
	a.write("shared.md", "1\n2\n3\n4\n5\n6\n")
	a.commit("c0")
	stale.pull()
	stale.write("shared.md", "one by stale\n2\n3\n4\n5\n6\n")
	for i := range 40 {
		a.write("shared.md", fmt.Sprintf("1\n2\n3\n4\n5\nsix %d\n", i))
		a.write(fmt.Sprintf("f%d.md", i), "x\n")
		a.commit(fmt.Sprint("c", i+1))
		a.e.publishing.Background.Wait()
	}
	a.e.publishing.Background.Sweep(context.Background()) // the sweep a later commit of the fleet would run
	stale.e.Close()                                       // as between two CLI processes
	if err := os.RemoveAll(filepath.Join(stale.e.private, "stores")); err != nil {
		t.Fatal(err)
	}
	stale.reopen(store, opts...)
	stale.setWindow(4, 4)
	return store, a, stale
}

// A cache is a cache: base content missing from it is fetched again from
// the store while the store still holds it (here kept by the retention
// window), never a permanent CACHE_CORRUPT.
func TestMissingBaseContentIsFetchedFromTheStore(t *testing.T) {
	_, a, stale := baseGoneScene(t, DefaultRetain)
	stale.pull()
	want := "one by stale\n2\n3\n4\n5\nsix 39\n"
	if got := stale.read("shared.md"); got != want {
		t.Fatalf("merged shared.md = %q, want %q", got, want)
	}
	stale.commit("stale edit")
	a.pull()
	if got := a.read("shared.md"); got != want {
		t.Fatalf("a's shared.md = %q", got)
	}
}

// When the store no longer holds the base either (cleanup under
// retention), the refusal says exactly that and how to get out, and
// nothing in L changes: BASELINE_LOST, which the documented procedure
// (move the files aside, pull, copy the edits back) ends.
func TestBaseContentGoneEverywhereIsBaselineLost(t *testing.T) {
	_, a, stale := baseGoneScene(t, NoRetainWindow)
	before := stale.files()
	_, err := stale.e.Pull(context.Background(), "")
	domainErr(t, err, diag.CodeEngineFailed, diag.ReasonBaselineLost)
	equalMaps(t, "L after the refusal", stale.files(), before)
	_, err = stale.e.Commit(context.Background(), "", "stale edit")
	domainErr(t, err, diag.CodeEngineFailed, diag.ReasonBaselineLost)

	// The way out.
	aside := t.TempDir()
	if err := os.Rename(stale.dir, filepath.Join(aside, "notes")); err != nil {
		t.Fatal(err)
	}
	stale.pull()
	edited, err := os.ReadFile(filepath.Join(aside, "notes", "shared.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(edited) == stale.read("shared.md") {
		t.Fatal("the edit is already there")
	}
	stale.write("shared.md", "one by stale\n2\n3\n4\n5\nsix 39\n")
	stale.commit("stale edit, copied back")
	a.pull()
	if got := a.read("shared.md"); got != "one by stale\n2\n3\n4\n5\nsix 39\n" {
		t.Fatalf("a's shared.md = %q", got)
	}
}
