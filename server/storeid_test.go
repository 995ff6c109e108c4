package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// wipe deletes every object of the store: the store deleted and started
// again at the same URL.
func wipe(t *testing.T, store remote.Store) {
	t.Helper()
	ctx := context.Background()
	objs, err := store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := store.Delete(ctx, o.Key); err != nil {
			t.Fatal(err)
		}
	}
}

// maxPackGeneration is the highest generation a proposal in the store
// would take if accepted alone: one past the generation it was built on
// (0: none).
func maxPackGeneration(t *testing.T, store remote.Store) uint64 {
	t.Helper()
	objs, err := store.List(context.Background(), remote.ProposalsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var top uint64
	for _, o := range objs {
		if kind, g, _, _, _ := remote.ParseProposalEntry(o.Key); kind == remote.EntryProposal {
			top = max(top, g+1)
		}
	}
	return top
}

// sameHost is another process of agent a's host: same private root, its
// own engine, the notebook directory dir.
func sameHost(t *testing.T, store remote.Store, a *agent, dir string) *agent {
	t.Helper()
	e, err := New(Config{Store: store, PrivateRoot: a.e.private, WorkspaceRoot: a.ws, DefaultDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &agent{t: t, e: e, ws: a.ws, dir: dir}
}

// Issue 37, point 5: a store deleted and started again at the same URL is
// another store. The host's caches of the old one (the highest generation
// seen, the object caches) must not shape what it publishes to the
// new one: before store IDs, the first commit built on the old store's
// generation 3 and left a pack of generation 4 in the new store, and from
// then on every host, a fresh one too, was refused with
// GENERATION_REGRESSED.
func TestStoreDeletedAndStartedAgain(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("log.md", "# log\n")
	for i, line := range []string{"one\n", "two\n", "three\n"} {
		a.appendTo("log.md", line)
		if res := a.commit("c"); res.Generation != uint64(i+1) {
			t.Fatalf("commit %d at generation %d", i, res.Generation)
		}
	}
	old := a.e.env.Ident.ID()
	if !remote.IsStoreID(old) {
		t.Fatalf("the first publication did not name the store: %q", old)
	}

	wipe(t, store)

	// The old directory, in a new process of the same host: its record
	// belongs to the deleted store, so the commit is refused and leaves
	// nothing behind in the new store; the files stay as they are.
	a.appendTo("log.md", "four\n")
	before := a.files()
	b := sameHost(t, store, a, a.dir)
	_, err := b.e.Commit(context.Background(), "", "after the store was deleted")
	domainErr(t, err, diag.CodeEngineFailed, diag.ReasonBaselineLost)
	if got := maxPackGeneration(t, store); got > 1 {
		t.Fatalf("a commit left a pack of generation %d in the new store", got)
	}
	equalMaps(t, "old directory after a refused commit", b.files(), before)
	// A pull adopts the directory as one without a record (the new
	// store is empty: every file stays, as a local addition).
	if res := b.pull(); res.Generation != 0 || len(res.Files) != 0 {
		t.Fatalf("pull of the old directory: %+v", res)
	}
	equalMaps(t, "old directory after its pull", b.files(), before)

	// A new directory on the same host starts the new notebook.
	c := sameHost(t, store, a, filepath.Join(a.ws, "fresh"))
	if res := c.pull(); res.Generation != 0 {
		t.Fatalf("pull of the new store at generation %d", res.Generation)
	}
	c.write("new.md", "new\n")
	if res := c.commit("first of the new store"); res.Generation != 1 {
		t.Fatalf("first commit of the new store at generation %d", res.Generation)
	}
	if id := c.e.env.Ident.ID(); !remote.IsStoreID(id) || id == old {
		t.Fatalf("the new store's ID is %q (the old one was %q)", id, old)
	}
	c.appendTo("new.md", "more\n")
	if res := c.commit("second"); res.Generation != 2 {
		t.Fatalf("second commit at generation %d", res.Generation)
	}
	if got := maxPackGeneration(t, store); got != 2 {
		t.Fatalf("packs up to generation %d, want 2", got)
	}

	// Every host reads the new store: a fresh one, and this one.
	fresh := newAgent(t, store)
	fresh.pull()
	equalMaps(t, "fresh host", fresh.files(), map[string]string{"new.md": "new\nmore\n"})
	again := sameHost(t, store, a, filepath.Join(a.ws, "again"))
	again.pull()
	equalMaps(t, "same host, new directory", again.files(), map[string]string{"new.md": "new\nmore\n"})

	// The old directory, emptied as the refusal says, pulls the new store.
	for p := range before {
		if err := os.Remove(filepath.Join(a.dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	b.pull()
	equalMaps(t, "old directory emptied and pulled", b.files(), map[string]string{"new.md": "new\nmore\n"})
}

// A store restored from a backup keeps its ID, but its generation goes
// back. Once the host has forgotten the higher generation (the restore
// procedure of docs/operations.md), a directory whose record is newer
// than the store has no usable record: nothing written after the backup
// may be taken for a remote deletion.
func TestRecordNewerThanRestoredStore(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("kept.md", "before the backup\n")
	a.commit("one")
	backup := snapshot(t, store)
	a.write("later.md", "written after the backup\n")
	a.commit("two")
	a.write("local.md", "never committed\n")
	restore(t, store, backup)
	if err := os.RemoveAll(filepath.Join(a.e.private, "stores")); err != nil { // the procedure's step 3
		t.Fatal(err)
	}
	before := a.files()
	_, err := newEngineLike(t, a).Commit(context.Background(), "", "m")
	domainErr(t, err, diag.CodeEngineFailed, diag.ReasonBaselineLost)
	equalMaps(t, "directory after a refused commit", a.files(), before)
	// A pull adopts the directory (docs/local-state.md L7): what the
	// store holds is equal, what it lacks stays as a local addition.
	e := newEngineLike(t, a)
	if _, err := e.Pull(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	equalMaps(t, "directory after its pull", a.files(), before)
	res, err := e.Commit(context.Background(), "", "after the restore")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || res.Files[0].Path != "later.md" || res.Files[1].Path != "local.md" {
		t.Fatalf("the commit after the restore published %+v", res.Files)
	}
}

func newEngineLike(t *testing.T, a *agent) *Engine {
	t.Helper()
	e, err := New(Config{Store: a.e.env.Store, PrivateRoot: a.e.private, WorkspaceRoot: a.ws, DefaultDir: a.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// snapshot copies every object of a store; restore puts such a copy
// back in place of whatever the store holds.
func snapshot(t *testing.T, store remote.Store) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	objs, err := store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, o := range objs {
		data, _, err := store.Get(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[o.Key] = data
	}
	return out
}

func restore(t *testing.T, store remote.Store, objs map[string][]byte) {
	t.Helper()
	wipe(t, store)
	ctx := context.Background()
	for k, data := range objs {
		if err := store.Put(ctx, k, data); err != nil {
			t.Fatal(err)
		}
	}
}

// A store made by a binary that predates store IDs has none (the
// version-2 fixture store, generation 82): readers use it as it is,
// without writing; the first commit names it, and the host's records of
// it (under the key they always had) stay in use: no second probe, no
// cold cache.
func TestStoreWithoutIDIsNamedByTheFirstWriter(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	remotetest.CopyFixture(t, filepath.Join("..", "remote", "testdata", "v2-store"), store)
	if id, err := remote.ReadStoreID(ctx, store); err != nil || id != "" {
		t.Fatalf("the fixture names a store ID: %q, %v", id, err)
	}
	a := newAgent(t, store)
	if res := a.pull(); res.Generation != 82 {
		t.Fatalf("pulled generation %d", res.Generation)
	}
	a.write("a.md", "a\n")

	b := newAgent(t, store)
	if res := b.pull(); res.Generation != 82 {
		t.Fatalf("reader pulled generation %d", res.Generation)
	}
	if id, err := remote.ReadStoreID(ctx, store); err != nil || id != "" {
		t.Fatalf("a reader named the store: %q, %v", id, err)
	}
	if b.e.env.Ident.ID() != "" {
		t.Fatalf("reader's ID %q for a store not yet named", b.e.env.Ident.ID())
	}

	w := newEngineLike(t, a)
	a.appendTo("a.md", "b\n")
	deletes := store.Calls(memstore.OpDelete)
	if _, err := w.Commit(ctx, "", "two"); err != nil {
		t.Fatal(err)
	}
	id, err := remote.ReadStoreID(ctx, store)
	if err != nil || !remote.IsStoreID(id) || w.env.Ident.ID() != id {
		t.Fatalf("the first writer did not name the store: %q (engine %q), %v", id, w.env.Ident.ID(), err)
	}
	if w.storeDir() != filepath.Join(w.private, "stores", w.storeKey) {
		t.Fatal("naming the store moved the host's records to another key")
	}
	if d := store.Calls(memstore.OpDelete) - deletes; d != 0 {
		t.Fatalf("the writer probed the store again (%d deletes)", d)
	}
	// The reader learns the name when the store looks different, or in
	// its next process.
	b2 := newEngineLike(t, b)
	if _, err := b2.Pull(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if b2.env.Ident.ID() != id {
		t.Fatalf("reader's new process has ID %q, want %q", b2.env.Ident.ID(), id)
	}
}

// A damaged store-id object stops the writer that must read it, with an
// integrity error that says which object, and changes nothing.
func TestCorruptStoreIDRefusesTheFirstCommit(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	if err := store.Put(ctx, remote.StoreIDKey, []byte("damaged\n")); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, store)
	a.pull()
	a.write("a.md", "a\n")
	_, err := a.e.Commit(ctx, "", "one")
	de := domainErr(t, err, diag.CodeStorageIntegrity, diag.ReasonCorruptManifest)
	if !errors.Is(de, remote.ErrCorruptStoreID) {
		t.Fatalf("cause %v, want the store ID's", de.Cause)
	}
	if st, err := remote.Open(store, remote.Options{}).ReadCurrent(ctx); err != nil || st.Generation() != 0 {
		t.Fatalf("the refused commit published: generation %d, %v", st.Generation(), err)
	}
}
