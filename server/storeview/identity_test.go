package storeview

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

func stateAt(g uint64) remote.State {
	return remote.State{Manifest: &remote.Manifest{Version: 2, Generation: g}, ETag: "e"}
}

// Naming a store keeps its key (keyFor), and with it the one memory of
// the highest generation: a call still running under the unnamed store's
// keyed parts and the calls after the naming share it, and a long-lived
// engine's write of it, left for after the reply, is not lost.
func TestNamingKeepsTheGenerationMemory(t *testing.T) {
	ctx := context.Background()
	var left []func() // work left for after the reply, not run
	switched := 0
	i := NewIdentity(IdentityConfig{Private: t.TempDir(), Store: memstore.New(),
		Later: func(f func()) { left = append(left, f) }, Switched: func() { switched++ }, Log: slog.New(slog.DiscardHandler)})
	i.Identify(ctx)
	before := i.now()
	if before.id != "" {
		t.Fatalf("a new store read as named: %q", before.id)
	}
	if err := i.Observe(ctx, stateAt(5)); err != nil {
		t.Fatal(err)
	}
	if err := i.NameStore(ctx); err != nil {
		t.Fatal(err)
	}
	after := i.now()
	if after.id == "" || after.key != before.key || i.ID() != after.id {
		t.Fatalf("after naming: id %q key %q, want a named store under key %q", after.id, after.key, before.key)
	}
	if after.generations != before.generations {
		t.Fatal("naming the store replaced its generation memory")
	}
	if err := i.Observe(ctx, stateAt(4)); !errors.Is(err, remote.ErrGenerationRegressed) {
		t.Fatalf("generation 4 after 5 was seen: %v", err)
	}
	if switched != 1 {
		t.Fatalf("switched %d times, want 1 (the naming)", switched)
	}
	if len(left) == 0 {
		t.Fatal("the higher generation was recorded before the reply")
	}
}

// A store deleted and started again at the same URL is another store:
// its `current`, absent, makes the identity read the ID again and move
// the host's records to a key of their own, with no memory of the old
// store's generations; P's record says so to the next process.
func TestIdentityOfAStoreStartedAgain(t *testing.T) {
	ctx := context.Background()
	private := t.TempDir()
	store := memstore.New()
	switched := 0
	cfg := IdentityConfig{Private: private, Store: store, Switched: func() { switched++ }, Log: slog.New(slog.DiscardHandler)}
	i := NewIdentity(cfg)
	if err := i.NameStore(ctx); err != nil {
		t.Fatal(err)
	}
	old, oldDir := i.ID(), i.Dir()
	if err := i.Observe(ctx, stateAt(3)); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(ctx, remote.StoreIDKey); err != nil {
		t.Fatal(err)
	}
	id, err := remote.EnsureStoreID(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if err := i.Observe(ctx, remote.State{}); err != nil {
		t.Fatalf("the new store's empty `current`: %v", err)
	}
	if i.ID() != id || i.Dir() == oldDir || id == old {
		t.Fatalf("after the store was started again: ID %q (want %q, old %q), dir %q (old %q)", i.ID(), id, old, i.Dir(), oldDir)
	}
	if switched != 2 {
		t.Fatalf("switched %d times, want 2 (named, then another store)", switched)
	}
	// The new store's generation 1 is no regression of the old one's 3.
	if err := i.Observe(ctx, stateAt(1)); err != nil {
		t.Fatal(err)
	}
	again := NewIdentity(cfg)
	if again.ID() != id || again.Dir() != i.Dir() {
		t.Fatalf("the next process: ID %q dir %q, want %q %q", again.ID(), again.Dir(), id, i.Dir())
	}
	if rid, key, ok := pstate.ReadStoreID(private, pstate.HashKey(store.Identity())); !ok || rid != id || i.dirOf(key) != i.Dir() {
		t.Fatalf("P's store-id record: %q %q %v", rid, key, ok)
	}
}

// A directory remembers the store it was used with: Remember records it,
// RememberedAbove finds it from a directory below, and RecordedOther
// tells a record made against another store at the same URL.
func TestRememberedStore(t *testing.T) {
	ctx := context.Background()
	private, dir := t.TempDir(), "/notes/team"
	store := memstore.New()
	i := NewIdentity(IdentityConfig{Private: private, Store: store, Locator: "loc", Log: slog.New(slog.DiscardHandler)})
	if _, ok := RememberedAbove(private, dir+"/sub"); ok {
		t.Fatal("a record before any was made")
	}
	if err := i.NameStore(ctx); err != nil {
		t.Fatal(err)
	}
	i.Remember(dir)
	r, ok := RememberedAbove(private, dir+"/sub/deeper")
	want := pstate.Remembered{Dir: dir, Identity: store.Identity(), StoreID: i.ID(), Locator: "loc"}
	if !ok || r != want {
		t.Fatalf("remembered %+v %v, want %+v", r, ok, want)
	}
	if i.RecordedOther(dir) {
		t.Fatal("the directory's own store taken for another")
	}
	// An embedder without a locator keeps the one recorded.
	NewIdentity(IdentityConfig{Private: private, Store: store, Log: slog.New(slog.DiscardHandler)}).Remember(dir)
	if r, _ := RememberedAbove(private, dir); r.Locator != "loc" {
		t.Fatalf("locator %q after a call without one", r.Locator)
	}
	// The store started again at the URL: the record is another store's.
	if err := store.Delete(ctx, remote.StoreIDKey); err != nil {
		t.Fatal(err)
	}
	if err := i.Observe(ctx, remote.State{}); err != nil {
		t.Fatal(err)
	}
	if err := i.NameStore(ctx); err != nil {
		t.Fatal(err)
	}
	if !i.RecordedOther(dir) {
		t.Fatal("a record of the deleted store taken for the new one's")
	}
}

func TestShowStore(t *testing.T) {
	for in, want := range map[string]string{
		"file:///srv/notes":                      "file:///srv/notes",
		"s3://b/p?endpoint=http://10.0.0.1:8333": "s3://b/p at 10.0.0.1:8333",
		"s3://b/p?region=eu":                     "s3://b/p",
	} {
		if got := ShowStore(in); got != want {
			t.Errorf("ShowStore(%q) = %q, want %q", in, got, want)
		}
	}
}
