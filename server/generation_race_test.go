package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// A new store's first writers race: a writer that read `current` absent
// checks the store for packs above generation 1 (a deleted `current`)
// only after the read, and after naming the store or switching to its ID
// (server/storeview), by which time other writers may have published generation
// 1 and left the pack of generation 2. That is a read overtaken by
// writers, not a deleted `current`: the commit goes on (its conditional
// create fails, it reads again and merges) instead of failing
// STORAGE_INTEGRITY / GENERATION_REGRESSED.
func TestAbsentCurrentOvertakenByFirstWriters(t *testing.T) {
	mem := memstore.New()
	hooked := &afterReadStore{Store: mem}
	a := newAgent(t, hooked)
	b := newAgent(t, mem)
	a.pull()
	b.pull()
	a.write("a.md", "from a\n")
	hooked.hook = func() {
		// Between a's read of an absent `current` and its check of the
		// store: b names the store and publishes generations 1 and 2.
		b.write("b.md", "one\n")
		b.commit("b one")
		b.write("b.md", "one\ntwo\n")
		b.commit("b two")
	}
	if got := a.commit("a").Generation; got != 3 {
		t.Fatalf("a's commit at generation %d, want 3", got)
	}
	check := newAgent(t, mem)
	check.pull()
	equalMaps(t, "the notebook", check.files(), map[string]string{"a.md": "from a\n", "b.md": "one\ntwo\n"})
}

// What the check above must still refuse, for a host that never saw the
// store: a `current` deleted while the packs above generation 1 stay, and
// one made again below those packs between the read and the check.
func TestAbsentCurrentWithNewerPacksIsRefused(t *testing.T) {
	for _, name := range []string{"deleted", "made again below the packs"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mem := memstore.New()
			w := newAgent(t, mem)
			w.pull()
			var first []byte
			for i := range 4 {
				w.write(fmt.Sprintf("f%d.md", i), "x\n")
				w.commit("c")
				if i == 0 {
					first, _, _ = mem.Get(ctx, remote.CurrentKey)
				}
			}
			if err := mem.Delete(ctx, remote.CurrentKey); err != nil {
				t.Fatal(err)
			}
			hooked := &beforeListStore{Store: mem}
			if name != "deleted" {
				hooked.hook = func() {
					if _, err := mem.CreateIfAbsent(ctx, remote.CurrentKey, first); err != nil {
						t.Error(err)
					}
				}
			}
			fresh := newAgent(t, hooked)
			_, err := fresh.e.Pull(ctx, "")
			domainErr(t, err, diag.CodeStorageIntegrity, diag.ReasonGenerationBack)
		})
	}
}

// beforeListStore runs hook once, right before the first list of the
// increments through it: between a read of `current` and the check of the
// store that an absent one calls for.
type beforeListStore struct {
	remote.Store
	once sync.Once
	hook func()
}

func (s *beforeListStore) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	if prefix == remote.IncrementsPrefix && s.hook != nil {
		s.once.Do(s.hook)
	}
	return s.Store.List(ctx, prefix)
}

// Naming a store keeps its key, and with it the one memory of the
// highest generation (server/storeview's TestNamingKeepsTheGenerationMemory
// shows that memory is the same): the first commit of a long-lived
// engine names the store, under the key its records had.
func TestNamingKeepsTheStoreKey(t *testing.T) {
	a := newAgent(t, memstore.New(), func(c *Config) { c.LongLived = true })
	a.pull()
	beforeDir := a.e.storeDir()
	if id := a.e.env.Ident.ID(); id != "" {
		t.Fatalf("a new store read as named: %q", id)
	}
	a.write("f.md", "x\n")
	a.commit("first")
	if id, dir := a.e.env.Ident.ID(), a.e.storeDir(); id == "" || dir != beforeDir {
		t.Fatalf("after the first commit: id %q dir %q, want a named store under %q", id, dir, beforeDir)
	}
}
