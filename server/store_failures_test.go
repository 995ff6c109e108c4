package server

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

func totalCalls(m *memstore.Mem) int {
	n := 0
	for _, op := range []memstore.Op{memstore.OpGet, memstore.OpHead, memstore.OpCreate, memstore.OpReplace, memstore.OpPut, memstore.OpDelete, memstore.OpList} {
		n += m.Calls(op)
	}
	return n
}

// DESIGN §10: an uncontended commit costs three requests, a no-op pull one,
// and the probe verdict is proved once per store and private root, not per
// process.
func TestRequestCounts(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("f.md", "1\n")
	a.commit("seed")

	n := totalCalls(store)
	a.appendTo("f.md", "2\n")
	a.commit("append")
	if got := totalCalls(store) - n; got != 3 {
		t.Fatalf("uncontended commit made %d requests, want 3", got)
	}
	n = totalCalls(store)
	a.pull()
	if got := totalCalls(store) - n; got != 1 {
		t.Fatalf("no-op pull made %d requests, want 1", got)
	}

	// A new engine on the same private root (a new CLI process) does not
	// probe again.
	e2, err := New(Config{Store: store, PrivateRoot: a.e.private, WorkspaceRoot: a.ws, DefaultDir: a.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	n = totalCalls(store)
	if _, err := e2.Pull(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if got := totalCalls(store) - n; got != 1 {
		t.Fatalf("no-op pull in a new process made %d requests, want 1 (probe verdict cached)", got)
	}
}

// A replace whose response is lost but which the store applied is proved
// accepted by re-reading `current`: OK, once.
func TestAmbiguousReplaceResolvedAccepted(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("f.md", "1\n")
	a.commit("seed")
	a.write("f.md", "1\n2\n")
	store.Inject(memstore.Fault{Op: memstore.OpReplace, After: remote.ErrAmbiguous})
	res := a.commit("lost response")
	if res.Generation != 2 || len(res.Files) != 1 {
		t.Fatalf("result %+v", res)
	}
	if left := store.Unfired(); len(left) != 0 {
		t.Fatalf("unfired faults %v", left)
	}
	b := newAgent(t, store)
	if b.pull().Generation != 2 || b.read("f.md") != "1\n2\n" {
		t.Fatalf("remote state wrong")
	}
}

// When acceptance cannot be decided the caller gets ACCEPTANCE_UNKNOWN,
// L is untouched, and a retry never duplicates the change.
func TestAmbiguousReplaceUnknown(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("f.md", "1\n")
	a.commit("seed")
	a.write("f.md", "1\n2\n")
	store.Inject(
		memstore.Fault{Op: memstore.OpGet}, // the commit's read of current passes
		memstore.Fault{Op: memstore.OpReplace, After: remote.ErrAmbiguous},
		// The one re-read that would decide the ambiguous write fails.
		memstore.Fault{Op: memstore.OpGet, Before: remote.ErrUnavailable},
	)
	_, err := a.e.Commit(context.Background(), "", "unknown")
	de := domainErr(t, err, diag.CodeStorageFailure, diag.ReasonAcceptanceUnknown)
	if !de.Retryable || de.Action != diag.ActionRetry {
		t.Fatalf("envelope %+v", de)
	}
	if left := store.Unfired(); len(left) != 0 {
		t.Fatalf("unfired faults %v", left)
	}
	if a.read("f.md") != "1\n2\n" {
		t.Fatalf("local edit touched")
	}
	// The retry resumes the call, finds it accepted at generation 2 and
	// reports that change as its own; nothing is published again.
	res := a.commit("retry")
	if res.Generation != 2 || !reflect.DeepEqual(stats(res.Files), map[string][2]int{"f.md": {1, 0}}) {
		t.Fatalf("retry result: %+v", res)
	}
	if st, err := a.e.env.Notebook.ReadCurrent(context.Background()); err != nil || st.Generation() != 2 {
		t.Fatalf("published again: current at %v (%v)", st.Generation(), err)
	}
}

// Lost races are not counted against a commit: each refused write of
// `current` (another write came first) re-reads it and folds again, and
// the commit is accepted with the caller's change, never REMOTE_BUSY.
func TestLostRacesDoNotFailTheCommit(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("f.md", "1\n")
	store.Inject(
		memstore.Fault{Op: memstore.OpCreate, KeyPrefix: "current", Before: remote.ErrPrecondition},
		memstore.Fault{Op: memstore.OpCreate, KeyPrefix: "current", Before: remote.ErrPrecondition},
	)
	if res := a.commit("busy"); res.Generation != 1 || len(res.Files) != 1 {
		t.Fatalf("commit after two lost writes: %+v", res)
	}
	if left := store.Unfired(); len(left) != 0 {
		t.Fatalf("unfired faults %v", left)
	}
	if b := newAgent(t, store); b.pull().Generation != 1 || b.read("f.md") != "1\n" {
		t.Fatal("the accepted commit is not what a reader pulls")
	}
}

// Store and integrity failures map to their codes; an unexpected store
// error makes the next call prove the store again.
func TestStoreFailures(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("f.md", "1\n")
	a.commit("seed")

	store.Inject(memstore.Fault{Op: memstore.OpGet, KeyPrefix: "current", Before: remote.ErrUnavailable})
	_, err := a.e.Pull(ctx, "")
	domainErr(t, err, diag.CodeStorageFailure, diag.ReasonStoreUnreachable)
	if _, err := os.Stat(a.e.env.ProbeFile()); err == nil {
		t.Fatal("probe verdict kept after an unexpected store error")
	}
	a.pull() // proves again and works

	store.Inject(memstore.Fault{Op: memstore.OpGet, Before: remote.ErrAccessDenied})
	_, err = a.e.Pull(ctx, "")
	domainErr(t, err, diag.CodeStorageFailure, diag.ReasonAccessDenied)

	// A pack that is missing or does not match its checksum: the
	// proposal that holds generation 1's.
	keys := proposalKeys(t, store)
	if len(keys) != 1 {
		t.Fatalf("proposals %v", keys)
	}
	key := keys[0]
	data, _, _ := store.Get(ctx, key)
	data[len(data)-100] ^= 1 // in the pack, past the proposal's descriptor
	if err := store.Put(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	_, err = newAgent(t, store).e.Pull(ctx, "")
	domainErr(t, err, diag.CodeStorageIntegrity, diag.ReasonCorruptPack)
	if err := store.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	_, err = newAgent(t, store).e.Pull(ctx, "")
	domainErr(t, err, diag.CodeStorageIntegrity, diag.ReasonMissingPack)

	// A malformed manifest.
	cur, etag, _ := store.Get(ctx, "current")
	if _, err := store.ReplaceIfMatch(ctx, "current", []byte(strings.Replace(string(cur), "{", "{\"x\":1,", 1)), etag); err != nil {
		t.Fatal(err)
	}
	_, err = a.e.Pull(ctx, "")
	de := domainErr(t, err, diag.CodeStorageIntegrity, diag.ReasonCorruptManifest)
	if strings.Contains(de.Error(), key) || strings.Contains(de.Message, a.e.private) {
		t.Fatalf("error text leaks a key or a private path: %q", de.Error())
	}
}
