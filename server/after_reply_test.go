package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// A long-lived engine replies before it keeps its published pack and
// records the highest generation, yet no commit downloads anything but
// `current` (the next call finds the pack kept) and Close leaves
// everything recorded.
func TestLongLivedCommitsLeaveTheirCacheWorkForAfterTheReply(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) { c.LongLived = true })
	// The work is slow, so a call or a Close that did not wait for it
	// would find it undone.
	a.e.afterReply.Slow = func() { time.Sleep(50 * time.Millisecond) }
	a.pull()
	a.write("a.md", "one\n")
	a.commit("seed")
	for i := range 5 {
		before := store.Calls(memstore.OpGet)
		a.appendTo("a.md", fmt.Sprintf("line %d\n", i))
		if r := a.commit("append"); r.Generation != uint64(i+2) {
			t.Fatalf("commit %d: generation %d", i, r.Generation)
		}
		if got := store.Calls(memstore.OpGet) - before; got > 1 {
			t.Fatalf("commit %d made %d GETs, want 1 (current)", i, got)
		}
	}
	if err := a.e.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(a.e.private, "stores", a.e.storeKey, "highest"))
	if f, ok := pstate.Unseal(data, 1); err != nil || !ok || strings.TrimLeft(f[0], "0") != "6" {
		t.Fatalf("highest after Close: %q %v, want 6", data, err)
	}
}

// A long-lived engine's commit replies without waiting for the cache's
// copy of its pack: the reply comes while that work is held, the cache
// does not yet reach the commit's generation, and once the work is
// released the next commit downloads nothing but `current`: it waited
// for the copy before it began.
func TestLongLivedCommitRepliesBeforeItsPackIsKept(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) { c.LongLived = true })
	a.pull()
	a.write("a.md", "one\n")
	a.commit("seed")
	a.e.afterReply.Wait()

	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()                               // a failure below still lets Close finish
	a.e.afterReply.Slow = func() { <-release } // set while no work runs
	a.appendTo("a.md", "two\n")
	// Were the reply to wait for the copy, this would never return.
	r := a.commit("append")
	st, err := remote.Open(store, remote.Options{}).ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.e.env.Caches.Open(objcache.Key(st))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Reach(); got >= r.Generation {
		t.Fatalf("the cache reaches %d before the work after the reply ran, want below %d", got, r.Generation)
	}
	free()

	before := store.Calls(memstore.OpGet)
	a.appendTo("a.md", "three\n")
	if r2 := a.commit("append"); r2.Generation != r.Generation+1 {
		t.Fatalf("generation %d, want %d", r2.Generation, r.Generation+1)
	}
	if got := store.Calls(memstore.OpGet) - before; got > 1 {
		t.Fatalf("the next commit made %d GETs, want 1 (current): the pack was not kept before it began", got)
	}
	if got := c.Reach(); got < r.Generation {
		t.Fatalf("the cache reaches %d after the next call, want at least %d", got, r.Generation)
	}
	if err := a.e.Close(); err != nil {
		t.Fatal(err)
	}
}
