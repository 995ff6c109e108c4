package server

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/rewrite"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

var errInjected = errors.New("injected failure")

// failAt makes failpoint name fail times times (-1: always) and registers
// a check that it fired at least once.
func failAt(t *testing.T, name string, times int) {
	t.Helper()
	fired := 0
	rewrite.SetFailHook(func(n string) error {
		if n != name || (times >= 0 && fired >= times) {
			return nil
		}
		fired++
		return errInjected
	})
	t.Cleanup(func() {
		rewrite.SetFailHook(nil)
		if fired == 0 {
			t.Errorf("failpoint %s never fired", name)
		}
	})
}

// recoveryScene: a and b share a notebook; a has published a change b has
// not seen, and b has an unpublished local edit of another file.
func recoveryScene(t *testing.T) (store *memstore.Mem, a, b *agent) {
	store = memstore.New()
	a, b = newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("remote.md", "r1\n")
	a.write("both.md", "1\n2\n3\n4\n5\n")
	a.commit("seed")
	b.pull()
	a.write("remote.md", "r1\nr2\n")
	a.write("new-remote.md", "nr\n")
	a.write("both.md", "1\nremote\n3\n4\n5\n")
	a.commit("remote change")
	b.write("local.md", "unpublished\n")
	b.write("both.md", "1\n2\n3\n4\nlocal\n")
	return store, a, b
}

var sceneWant = map[string]string{
	"remote.md":     "r1\nr2\n",
	"new-remote.md": "nr\n",
	"both.md":       "1\nremote\n3\n4\nlocal\n",
	"local.md":      "unpublished\n",
}

// A failure at any point after the rewrite of L began is reported as
// RECOVERY_FAILURE; the engine resynchronises at once and nothing, local
// or accepted, is lost.
func TestRecoveryResynchronises(t *testing.T) {
	for _, fp := range []string{FailAfterRecoveryFlag, FailMidRewrite, FailAfterRewrite, FailAfterBaseline} {
		for _, op := range []string{"pull", "commit"} {
			t.Run(op+"/"+fp, func(t *testing.T) {
				store, a, b := recoveryScene(t)
				failAt(t, fp, 1)
				var err error
				if op == "pull" {
					_, err = b.e.Pull(context.Background(), "")
				} else {
					_, err = b.e.Commit(context.Background(), "", "b's edit")
				}
				de := domainErr(t, err, diag.CodeRecoveryFailure, diag.ReasonResynchronized)
				if de.Recovery == nil || !de.Recovery.Resynchronized || !de.Retryable {
					t.Fatalf("recovery report %+v", de.Recovery)
				}
				if op == "commit" && de.Recovery.RemoteAccepted != "yes" {
					t.Fatalf("commit failed after acceptance, report says %q", de.Recovery.RemoteAccepted)
				}
				equalMaps(t, "b after recovery", b.files(), sceneWant)
				if _, err := os.Stat(b.e.stateDir(b.dir) + "/recovery"); err == nil {
					t.Fatalf("recovery flag left behind")
				}
				// Publishing (again) loses nothing and duplicates nothing.
				b.commit("after recovery")
				a.pull()
				equalMaps(t, "a sees everything", a.files(), sceneWant)
				if gen := newAgent(t, store).pull().Generation; gen != 3 {
					t.Fatalf("generation %d, want 3 (one publication by b)", gen)
				}
			})
		}
	}
}

// When the immediate resynchronisation fails too, the error says the
// recovery is pending; the next call resynchronises first.
func TestRecoveryPendingThenNextCall(t *testing.T) {
	_, a, b := recoveryScene(t)
	failAt(t, FailAfterRecoveryFlag, 2) // the call and its immediate resync
	_, err := b.e.Pull(context.Background(), "")
	de := domainErr(t, err, diag.CodeRecoveryFailure, diag.ReasonRecoveryPending)
	if de.Recovery == nil || de.Recovery.Resynchronized || de.Recovery.Stage != "rewrite" || de.Recovery.RemoteAccepted != "no" {
		t.Fatalf("recovery report %+v", de.Recovery)
	}
	if _, err := os.Stat(b.e.stateDir(b.dir) + "/recovery"); err != nil {
		t.Fatalf("recovery flag missing: %v", err)
	}
	res := b.commit("next call")
	if res.Generation != 3 {
		t.Fatalf("generation %d", res.Generation)
	}
	equalMaps(t, "b", b.files(), sceneWant)
	a.pull()
	equalMaps(t, "a", a.files(), sceneWant)
}

// A failure after the store accepted a publication but before L was
// touched: the resynchronisation merges the published edits as identical
// changes, and a second commit publishes nothing twice. (The kill -9
// variant runs in the CLI's black-box crash tests.)
func TestPublishedButNotRewritten(t *testing.T) {
	_, a, b := recoveryScene(t)
	failAt(t, FailAfterPublish, -1)
	_, err := b.e.Commit(context.Background(), "", "b's edit")
	de := domainErr(t, err, diag.CodeRecoveryFailure, diag.ReasonResynchronized)
	if de.Recovery.RemoteAccepted != "yes" || de.Recovery.Stage != "publish" {
		t.Fatalf("report %+v", de.Recovery)
	}
	rewrite.SetFailHook(nil)
	if res := b.pull(); res.Generation != 3 {
		t.Fatalf("generation %d", res.Generation)
	}
	equalMaps(t, "b", b.files(), sceneWant)
	if res := b.commit("again"); len(res.Files) != 0 || res.Generation != 3 {
		t.Fatalf("re-commit published again: %+v", res)
	}
	a.pull()
	equalMaps(t, "a", a.files(), sceneWant)
}

// An edit made while a pull is rewriting the directory (after the scan,
// before the file is replaced) is not overwritten: the rewrite stops, and
// the resynchronisation merges the edit with the remote change.
func TestEditDuringRewriteIsKept(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("x.md", "1\n2\n3\n4\n5\n6\n")
	a.commit("seed")
	b.pull()
	a.write("x.md", "remote\n2\n3\n4\n5\n6\n")
	a.commit("remote edit")

	edited := false
	rewrite.SetFailHook(func(name string) error {
		if name == FailAfterRecoveryFlag && !edited {
			edited = true
			b.write("x.md", "1\n2\n3\n4\n5\n6\nconcurrent\n")
		}
		return nil
	})
	t.Cleanup(func() { rewrite.SetFailHook(nil) })
	_, err := b.e.Pull(context.Background(), "")
	de := domainErr(t, err, diag.CodeRecoveryFailure, diag.ReasonResynchronized)
	if !errors.Is(de, workdir.ErrChangedDuringScan) {
		t.Fatalf("cause %v", de.Cause)
	}
	if got := b.read("x.md"); got != "remote\n2\n3\n4\n5\n6\nconcurrent\n" {
		t.Fatalf("concurrent edit lost or not merged: %q", got)
	}
}
