package server

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rewrite"
)

// errKilled is panicked at a failpoint to stop a call dead, as a kill
// would: nothing after the failpoint runs (deferred unlocks aside).
var errKilled = errors.New("killed at failpoint")

// killCommitAt runs a commit of a that stops at failpoint name, then
// replaces a's engine by a fresh one on the same private root (a new
// process).
func killCommitAt(t *testing.T, a *agent, store remote.Store, name, msg string) {
	t.Helper()
	rewrite.SetFailHook(func(n string) error {
		if n == name {
			panic(errKilled)
		}
		return nil
	})
	func() {
		defer func() {
			rewrite.SetFailHook(nil)
			if r := recover(); r != errKilled {
				t.Fatalf("commit was not stopped at %s: %v", name, r)
			}
		}()
		a.e.Commit(context.Background(), "", msg)
	}()
	private := a.e.private
	a.e.Close()
	e, err := New(Config{Store: store, PrivateRoot: private, WorkspaceRoot: a.ws, DefaultDir: a.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	a.e = e
}

// wantPublished asserts what a fresh pull finds in rel.
func wantPublished(t *testing.T, store remote.Store, rel, want string) {
	t.Helper()
	obs := newAgent(t, store)
	obs.pull()
	if got := obs.read(rel); got != want {
		t.Fatalf("published %s = %q, want %q", rel, got, want)
	}
}

// editAfterCommit: a committed n.md = "a", then appended "x" locally.
func editAfterCommit(t *testing.T) (*memstore.Mem, *agent) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("n.md", "a\n")
	a.commit("one")
	a.appendTo("n.md", "x\n")
	return store, a
}

// A commit accepted by the store whose process died before L and the
// baseline were updated must not make the next adjacent edit conflict
// with the writer's own published lines (the fault campaign's finding 1).
func TestKilledAfterPublishNextCommitIsClean(t *testing.T) {
	store, a := editAfterCommit(t)
	killCommitAt(t, a, store, FailAfterPublish, "two")
	a.appendTo("n.md", "y\n")
	res := a.commit("three")
	if got := a.read("n.md"); got != "a\nx\ny\n" {
		t.Fatalf("n.md = %q", got)
	}
	equalMaps(t, "diffstat", stats(res.Files), map[string][2]int{"n.md": {1, 0}})
	wantPublished(t, store, "n.md", "a\nx\ny\n")
}

// The same with a pull next, and with another writer's change to the same
// file accepted in between: the writer's own lines are not doubled and the
// other change is merged.
func TestKilledAfterPublishThenOthersThenPull(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("n.md", "top\n\nmid\n\na\n")
	a.write("gone.md", "g\n")
	a.commit("one")
	b.pull()
	a.appendTo("n.md", "x\n")
	a.remove("gone.md")
	a.write("new.md", "new\n")
	killCommitAt(t, a, store, FailAfterPublish, "two")
	b.pull()
	b.write("n.md", "TOP\n\nmid\n\na\nx\n")
	b.commit("other")
	a.appendTo("n.md", "y\n")
	a.pull()
	equalMaps(t, "a's files", a.files(), map[string]string{"n.md": "TOP\n\nmid\n\na\nx\ny\n", "new.md": "new\n"})
	a.commit("three")
	b.pull()
	equalMaps(t, "b's files", b.files(), map[string]string{"n.md": "TOP\n\nmid\n\na\nx\ny\n", "new.md": "new\n"})
}

// A publication that never reached the store leaves no trace: the next
// commit publishes the edit as usual.
func TestKilledBeforeAcceptanceNextCommitPublishes(t *testing.T) {
	store, a := editAfterCommit(t)
	store.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrUnavailable})
	if _, err := a.e.Commit(context.Background(), "", "two"); err == nil {
		t.Fatal("commit with a failing store succeeded")
	}
	a.appendTo("n.md", "y\n")
	a.commit("three")
	wantPublished(t, store, "n.md", "a\nx\ny\n")
}

// When P cannot be written right after the store accepted the commit (a
// full disk), the error says the publication was accepted, and once P is
// writable again the next commit does not conflict with it.
func TestUnwritablePrivateStateAfterPublishReportsAccepted(t *testing.T) {
	store, a := editAfterCommit(t)
	flag := a.e.stateDir(a.dir) + "/recovery"
	rewrite.SetFailHook(func(n string) error {
		if n == FailAfterPublish {
			// A non-empty directory where the flag goes: no write of
			// it can succeed, as on a full disk.
			if err := os.MkdirAll(flag+"/x", 0o700); err != nil {
				t.Error(err)
			}
		}
		return nil
	})
	t.Cleanup(func() { rewrite.SetFailHook(nil) })
	_, err := a.e.Commit(context.Background(), "", "two")
	rewrite.SetFailHook(nil)
	var de *diag.Error
	if !errors.As(err, &de) || de.Code != diag.CodeRecoveryFailure || de.Recovery == nil || de.Recovery.RemoteAccepted != "yes" {
		t.Fatalf("want RECOVERY_FAILURE with remoteAccepted yes, got %v (%+v)", err, de)
	}
	if err := os.RemoveAll(flag); err != nil {
		t.Fatal(err)
	}
	a.appendTo("n.md", "y\n")
	a.commit("three")
	wantPublished(t, store, "n.md", "a\nx\ny\n")
}

// A commit whose acceptance could not be decided (ACCEPTANCE_UNKNOWN) but
// that the store did accept is common ground for the next commit too.
func TestAcceptanceUnknownThenAdjacentEdit(t *testing.T) {
	store, a := editAfterCommit(t)
	store.Inject(
		memstore.Fault{Op: memstore.OpGet}, // the commit's read of current passes
		memstore.Fault{Op: memstore.OpReplace, After: remote.ErrAmbiguous},
		// The one re-read that would decide the ambiguous write fails.
		memstore.Fault{Op: memstore.OpGet, Before: remote.ErrUnavailable},
	)
	_, err := a.e.Commit(context.Background(), "", "two")
	domainErr(t, err, diag.CodeStorageFailure, diag.ReasonAcceptanceUnknown)
	a.appendTo("n.md", "y\n")
	a.commit("three")
	wantPublished(t, store, "n.md", "a\nx\ny\n")
}

// The same when the interrupted commit merged another writer's change
// (its proposal is not L itself): the next commit is clean and keeps both.
func TestKilledAfterMergingPublishNextCommitIsClean(t *testing.T) {
	store, a := editAfterCommit(t)
	b := newAgent(t, store)
	b.pull()
	b.write("other.md", "b\n")
	b.commit("b")
	killCommitAt(t, a, store, FailAfterPublish, "two")
	a.appendTo("n.md", "y\n")
	a.commit("three")
	wantPublished(t, store, "n.md", "a\nx\ny\n")
	wantPublished(t, store, "other.md", "b\n")
}

// The same when the interrupted commit text-merged the file with another
// writer's change (each writer appends in its own section, as in the
// fault campaign): the next edit in the writer's section is clean.
func TestKilledAfterTextMergedPublishNextCommitIsClean(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("s.md", "# a\na1\n\n\n\n# b\nb1\n")
	a.commit("sections")
	b.pull()
	b.write("s.md", "# a\na1\n\n\n\n# b\nb1\nb2\n")
	b.commit("b2")
	a.write("s.md", "# a\na1\na2\n\n\n\n# b\nb1\n")
	killCommitAt(t, a, store, FailAfterPublish, "a2")
	a.write("s.md", "# a\na1\na2\na3\n\n\n\n# b\nb1\n")
	a.commit("a3")
	wantPublished(t, store, "s.md", "# a\na1\na2\na3\n\n\n\n# b\nb1\nb2\n")
}

// A P that cannot record the pending publication (a full disk) fails the
// commit before anything is published: publishing would leave an accepted
// change that the directory cannot record. The record is written while the
// pack is uploaded (remote.Proposal.Ready), so at most an unreferenced pack
// is left, as after any failed attempt; `current` is never written. Nor
// is the next baseline prepared (pstate.Prepared) for a version never
// registered: the spare in P is as the last commit left it.
func TestUnwritablePendingRecordPublishesNothing(t *testing.T) {
	store, a := editAfterCommit(t)
	if err := os.MkdirAll(filepath.Join(a.e.stateDir(a.dir), "pending", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	spare := filepath.Join(a.e.stateDir(a.dir), pstate.BaselineSpare)
	before, spareErr := os.ReadFile(spare)
	writes := store.Calls(memstore.OpReplace) + store.Calls(memstore.OpCreate)
	_, err := a.e.Commit(context.Background(), "", "two")
	domainErr(t, err, diag.CodeEngineFailed, diag.ReasonLocalIO)
	if n := store.Calls(memstore.OpReplace) + store.Calls(memstore.OpCreate) - writes; n != 0 {
		t.Fatalf("%d conditional writes after the record failed, want none", n)
	}
	wantPublished(t, store, "n.md", "a\n")
	if after, err := os.ReadFile(spare); !bytes.Equal(after, before) || (err == nil) != (spareErr == nil) {
		t.Fatalf("the baseline spare changed when no version was registered: %d bytes (%v) before, %d (%v) after", len(before), spareErr, len(after), err)
	}
}

// A publication accepted while its process died, then overtaken by more
// publications than `current` lists (format 2 keeps only the newest), is
// still found in the history the segments index: the writer's published
// line is not taken for a new local insertion and brought back after
// another writer changed it.
func TestKilledAfterPublishThenOvertakenByManyOthers(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("n.md", "top\n\na\n")
	a.commit("one")
	a.appendTo("n.md", "x\n")
	killCommitAt(t, a, store, FailAfterPublish, "two")
	b.pull()
	b.write("n.md", "top\n\na\nX\n")
	b.commit("changes x")
	b.write("filler.md", "")
	for i := range 40 {
		b.appendTo("filler.md", "line\n")
		b.commit("filler " + string(rune('a'+i%26)))
	}
	a.write("other.md", "o\n")
	a.pull()
	if got := a.read("n.md"); got != "top\n\na\nX\n" {
		t.Fatalf("n.md = %q, want the other writer's change of the published line only", got)
	}
}
