//go:build unix

package server

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// registerRacer runs rival before the next left registrations of a
// proposal: another writer's commit lands between a commit's build and
// its registration.
type registerRacer struct {
	remote.Store
	rival func()
	left  int
}

func (s *registerRacer) Put(ctx context.Context, key string, data []byte) error {
	if kind, _, _, _, _ := remote.ParseProposalEntry(key); kind == remote.EntryProposal && s.left > 0 {
		s.left--
		s.rival()
	}
	return s.Store.Put(ctx, key, data)
}

// The baseline a commit writes ahead while it publishes (pstate.Prepared)
// becomes A only when the state accepted is the one it
// was prepared for: when a rival's commit lands first, the fold
// re-parents the change onto it, the accepted tree holds the rival's
// change too, and that is what A records. Either way P holds no file
// beside A but the spare, and an engine that reads P afresh agrees.
func TestPreparedBaselineFollowsTheAcceptedState(t *testing.T) {
	files, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &registerRacer{Store: files}
	a := newAgent(t, store, func(c *Config) { c.LongLived = true })
	rival := newAgent(t, files)
	a.pull()
	a.write("mine.md", "mine\n")
	a.commit("seed")
	rival.pull()
	// Beside A, a commit leaves the spare its preparation wrote into:
	// once installed, it holds the A before (on Linux, where the two
	// files are exchanged); not installed, the baseline prepared, which
	// no one reads and the next preparation writes over. A is the
	// accepted state's.
	leftover := func(when string, spare, base uint64) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(a.e.stateDir(a.dir), pstate.BaselineSpare))
		switch {
		case os.IsNotExist(err) && runtime.GOOS != "linux":
		case err != nil:
			t.Fatalf("%s: %v", when, err)
		default:
			if b, err := pstate.DecodeBaseline(data); err != nil || b.Generation != spare {
				t.Fatalf("%s: the spare holds a baseline (%v) where the one of generation %d was expected", when, err, spare)
			}
		}
		data, err = os.ReadFile(filepath.Join(a.e.stateDir(a.dir), "baseline"))
		if b, derr := pstate.DecodeBaseline(data); err != nil || derr != nil || b.Generation != base {
			t.Fatalf("%s: A is not generation %d: %v %v", when, base, err, derr)
		}
	}

	// Uncontended: the prepared baseline is installed.
	a.appendTo("mine.md", "one\n")
	if r := a.commit("one"); r.Generation != 2 {
		t.Fatalf("commit one: %+v", r)
	}
	leftover("after an uncontended commit", 1, 2)

	// The rival's commit lands before a's proposal is registered: the
	// baseline prepared for it (generation 3, L's tree) is not what is
	// accepted (generation 4, re-parented onto the rival's file).
	store.rival = func() {
		rival.write("theirs.md", "theirs\n")
		rival.commit("rival")
	}
	store.left = 1
	a.appendTo("mine.md", "two\n")
	if r := a.commit("two"); r.Generation != 4 {
		t.Fatalf("commit two after the rival's: %+v", r)
	}
	leftover("after a re-parented commit", 3, 4)
	if got := a.read("theirs.md"); got != "theirs\n" {
		t.Fatalf("the rival's file in L: %q", got)
	}

	// A fresh engine on a's directory reads P's baseline: nothing to
	// publish, and its next edit goes on top of generation 4.
	fresh := &agent{t: t, e: a.reopenPlain(t, files), ws: a.ws, dir: a.dir}
	if r := fresh.commit("nothing"); r.Generation != 4 || len(r.Files) != 0 {
		t.Fatalf("a fresh engine found changes against P's baseline: %+v", r)
	}
	fresh.appendTo("mine.md", "three\n")
	if r := fresh.commit("three"); r.Generation != 5 || len(r.Files) != 1 {
		t.Fatalf("a fresh engine's commit: %+v", r)
	}
	rival.pull()
	equalMaps(t, "notebook", rival.files(), map[string]string{"mine.md": "mine\none\ntwo\nthree\n", "theirs.md": "theirs\n"})
}

// reopenPlain is a second engine (not long-lived) on a's workspace and
// private root.
func (a *agent) reopenPlain(t *testing.T, store remote.Store) *Engine {
	t.Helper()
	e, err := New(Config{Store: store, PrivateRoot: a.e.private, WorkspaceRoot: a.ws, DefaultDir: a.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// A publication that fails outright (the store refuses the write of
// `current`) leaves A as it was, the prepared baseline only in the spare
// no one reads: the edit is published by the next commit, which resumes
// the registered change (its outcome was not decided) rather than
// publishing it twice.
func TestPreparedBaselineDiscardedWhenNothingIsAccepted(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) { c.LongLived = true })
	a.pull()
	a.write("mine.md", "mine\n")
	a.commit("seed")
	store.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrUnavailable})
	a.appendTo("mine.md", "one\n")
	if _, err := a.e.Commit(context.Background(), "", "refused"); err == nil {
		t.Fatal("the commit succeeded although the store refused `current`")
	}
	data, err := os.ReadFile(filepath.Join(a.e.stateDir(a.dir), "baseline"))
	if b, derr := pstate.DecodeBaseline(data); err != nil || derr != nil || b.Generation != 1 {
		t.Fatalf("A after a refused commit: %v %v, want generation 1", err, derr)
	}
	if r := a.commit("again"); r.Generation != 2 {
		t.Fatalf("the edit after the refused commit: %+v", r)
	}
	if b := newAgent(t, store); b.pull().Generation != 2 || b.read("mine.md") != "mine\none\n" {
		t.Fatal("the edit is not published once")
	}
}
