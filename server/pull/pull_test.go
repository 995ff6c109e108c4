package pull_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/pull"
	"github.com/slivingdoc/slivingdoc/server/rewrite"
	"github.com/slivingdoc/slivingdoc/server/rules"
	"github.com/slivingdoc/slivingdoc/server/storeview"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// writer is another host publishing to the shared store: a whole engine
// (its own workspace and private root), used only to make accepted states.
type writer struct {
	t   *testing.T
	e   *server.Engine
	dir string
}

func newWriter(t *testing.T, store remote.Store) *writer {
	t.Helper()
	ws := t.TempDir()
	cfg := server.Config{Store: store, PrivateRoot: t.TempDir(), WorkspaceRoot: ws, DefaultDir: filepath.Join(ws, "notes"),
		CondEstimate: 2 * time.Millisecond, RTT: time.Millisecond}
	e, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Pull(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	return &writer{t: t, e: e, dir: cfg.DefaultDir}
}

// commit publishes files (path → content) as one commit.
func (w *writer) commit(files map[string]string) {
	w.t.Helper()
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(w.dir, p), []byte(c), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	if _, err := w.e.Commit(context.Background(), "", "writer's change"); err != nil {
		w.t.Fatal(err)
	}
}

// counting is the host's view of the shared store, counting the reads
// of `current`: each synchronisation (Run) reads it once.
type counting struct {
	remote.Store
	current atomic.Int64
}

func (c *counting) Get(ctx context.Context, key string) ([]byte, string, error) {
	if key == remote.CurrentKey {
		c.current.Add(1)
	}
	return c.Store.Get(ctx, key)
}

// host is the directory under test: L, its private state, and the Env a
// call on it is lent, wired as the engine wires its own.
type host struct {
	t   *testing.T
	env *dircall.Env
	l   string
	st  dirstate.State
	mu  sync.Mutex
	// syncs counts the reads of `current` since the host was made.
	syncs *atomic.Int64
}

func newHost(t *testing.T, shared remote.Store) *host {
	t.Helper()
	store := &counting{Store: shared}
	ctx := context.Background()
	ws, priv := t.TempDir(), t.TempDir()
	l := filepath.Join(ws, "notes")
	if err := os.MkdirAll(l, 0o755); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ign, err := workdir.NewIgnore(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	ident := storeview.NewIdentity(storeview.IdentityConfig{Private: priv, Store: store, Log: log})
	ident.Identify(ctx)
	nb := remote.Open(store, remote.Options{Observe: ident.Observe})
	caches := objcache.New(nb, log, ident.Dir, func() (uint64, bool) { return pstate.OldestBaseline(priv) })
	t.Cleanup(func() { caches.Close() })
	env := &dircall.Env{Log: log, Store: store, Notebook: nb, Caches: caches, Ident: ident, Probe: &storeview.Verdict{},
		Ignore: ign, Workspace: rules.Workspace{Root: ws, Default: l}}
	st := dirstate.State{Dir: pstate.Dir{Path: pstate.DirPath(priv, store.Identity(), l, l), L: l, Store: pstate.HashKey(store.Identity())},
		Remember: ident.Remember}
	return &host{t: t, env: env, l: l, st: st, syncs: &store.current}
}

// call opens a call on L, as the engine's begin does; ended at cleanup
// unless the test ends it.
func (h *host) call() *dircall.Call {
	h.t.Helper()
	s, err := dircall.Open(h.env, context.Background(), h.l, h.st, &h.mu)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := s.OpenL(true); err != nil {
		s.End()
		h.t.Fatal(err)
	}
	return s
}

// run is one whole call: open, pull.Run, end.
func (h *host) run() (*dircall.Call, []string, error) {
	s := h.call()
	defer s.End()
	_, conflicts, err := pull.Run(s, "pull")
	var paths []string
	for _, c := range conflicts {
		paths = append(paths, c.Path+":"+string(c.Reason))
	}
	return s, paths, err
}

func (h *host) write(p, content string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.l, p), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *host) read(p string) string {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.l, p))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *host) baseline() *dirstate.Baseline {
	h.t.Helper()
	b, err := h.st.LoadBaseline()
	if err != nil || b == nil {
		h.t.Fatalf("baseline %v, %v", b, err)
	}
	return b
}

func (h *host) flag() *pstate.RecoveryFlag {
	h.t.Helper()
	f, err := h.st.LoadRecovery()
	if err != nil {
		h.t.Fatal(err)
	}
	return f
}

var errInjected = errors.New("injected")

// failAt makes rewrite's failpoint name fail its first n hits and counts
// every hit; past n it stops failing, so that a nested resynchronisation
// (a bug) ends and shows in the count.
func failAt(t *testing.T, name string, n int) *int {
	t.Helper()
	hits := 0
	rewrite.SetFailHook(func(got string) error {
		if got != name {
			return nil
		}
		hits++
		if hits <= n {
			return errInjected
		}
		return nil
	})
	t.Cleanup(func() { rewrite.SetFailHook(nil) })
	return &hits
}

func wantRecoveryFailure(t *testing.T, err error, reason string) *diag.Error {
	t.Helper()
	var de *diag.Error
	if !errors.As(err, &de) || de.Code != diag.CodeRecoveryFailure || de.Reason != reason || de.Recovery == nil {
		t.Fatalf("got %v, want RECOVERY_FAILURE/%s", err, reason)
	}
	if !errors.Is(de, errInjected) {
		t.Fatalf("cause %v, want the injected failure", de.Cause)
	}
	return de
}

// The scene: the writer's log.md ("1") is pulled here; then the writer
// appends "r" and adds two files (generation 2: three files to rewrite, so
// that a rewrite stopped after its first file twice still has one left),
// and this host appends "l", unpublished.
// Both appended at the end: the merge keeps both lines once each, and a
// rewrite merged again against the wrong base would repeat one.
func scene(t *testing.T) (*writer, *host) {
	store := memstore.New()
	w := newWriter(t, store)
	w.commit(map[string]string{"log.md": "1\n", "other.md": "o\n"})
	h := newHost(t, store)
	if _, _, err := h.run(); err != nil {
		t.Fatal(err)
	}
	w.commit(map[string]string{"log.md": "1\nr\n", "new.md": "n\n", "new2.md": "n2\n"})
	h.write("log.md", "1\nl\n")
	return w, h
}

// wantMerged: L holds both appended lines once each, and the remote files.
func wantMerged(t *testing.T, h *host) {
	t.Helper()
	got := h.read("log.md")
	if strings.Count(got, "r\n") != 1 || strings.Count(got, "l\n") != 1 || !strings.HasPrefix(got, "1\n") || len(got) != len("1\nr\nl\n") {
		t.Fatalf("log.md = %q, want 1, r and l once each", got)
	}
	if h.read("new.md") != "n\n" || h.read("new2.md") != "n2\n" || h.read("other.md") != "o\n" {
		t.Fatal("the remote files are not in L")
	}
}

// A failure once L may have changed becomes RECOVERY_FAILURE after one
// resynchronisation, which here works: L and A end merged and recorded,
// the flag cleared.
func TestFailureAfterLChangedResynchronisesOnce(t *testing.T) {
	for _, fp := range []string{rewrite.FailAfterRecoveryFlag, rewrite.FailMidRewrite, rewrite.FailAfterRewrite, rewrite.FailAfterBaseline} {
		t.Run(fp, func(t *testing.T) {
			_, h := scene(t)
			failAt(t, fp, 1)
			syncs := h.syncs.Load()
			_, _, err := h.run()
			de := wantRecoveryFailure(t, err, diag.ReasonResynchronized)
			if !de.Recovery.Resynchronized {
				t.Fatalf("report %+v", de.Recovery)
			}
			if n := h.syncs.Load() - syncs; n != 2 {
				t.Fatalf("`current` read %d times, want 2 (the call, one resynchronisation)", n)
			}
			wantMerged(t, h)
			if f := h.flag(); f != nil {
				t.Fatalf("flag left: %+v", f)
			}
			if b := h.baseline(); b.Generation != 2 {
				t.Fatalf("A is generation %d", b.Generation)
			}
		})
	}
}

// When the resynchronisation fails too, there is exactly one attempt,
// never a nested one: the report says the recovery is pending, the flag
// stays at the failed stage, and the next call that finds the flag
// settles and resynchronises first (RecoverFirst), ending with L merged
// once, not merged again against the old base.
func TestResynchronisationIsNeverNestedAndTheNextCallSettlesFirst(t *testing.T) {
	// The failpoints the resynchronisation reaches again: it rewrites L
	// too (after the others, settling leaves nothing to rewrite).
	for _, fp := range []string{rewrite.FailAfterRecoveryFlag, rewrite.FailMidRewrite} {
		t.Run(fp, func(t *testing.T) {
			_, h := scene(t)
			hits := failAt(t, fp, 2)
			syncs := h.syncs.Load()
			_, _, err := h.run()
			de := wantRecoveryFailure(t, err, diag.ReasonRecoveryPending)
			if de.Recovery.Resynchronized {
				t.Fatalf("report %+v", de.Recovery)
			}
			if n := h.syncs.Load() - syncs; *hits != 2 || n != 2 {
				t.Fatalf("the failpoint was reached %d times and `current` read %d: want 2 each (the call, one resynchronisation)", *hits, n)
			}
			f := h.flag()
			if f == nil || f.Rewrite == "" {
				t.Fatalf("flag %+v: want it naming the interrupted rewrite", f)
			}
			// When the next call's own rewrite begins, the interrupted one
			// is settled: P records a baseline of generation 2 that
			// describes L, and its flag is gone.
			var seen []string
			rewrite.SetFailHook(func(name string) error {
				if name == rewrite.FailAfterRewriteRecord {
					b, f := h.baseline(), h.flag()
					if b.Generation != 2 || f != nil {
						seen = append(seen, fmt.Sprintf("A of generation %d, flag %+v", b.Generation, f))
					} else {
						seen = append(seen, "settled")
					}
				}
				return nil
			})

			s := h.call()
			err = pull.RecoverFirst(s)
			s.End()
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) != 1 || seen[0] != "settled" {
				t.Fatalf("when the next rewrite began: %v, want the interrupted one settled", seen)
			}
			wantMerged(t, h)
			if f := h.flag(); f != nil {
				t.Fatalf("flag left: %+v", f)
			}
			if b := h.baseline(); b.Generation != 2 || b.HasUnknown() {
				t.Fatalf("A is generation %d (unknown bases: %v)", b.Generation, b.UnknownPaths())
			}
		})
	}
}

// R == A: nothing is fetched (the object caches are never synced) and
// nothing is rewritten; L keeps its local edit, A stays recorded.
func TestNothingToDoWhenRIsA(t *testing.T) {
	store := memstore.New()
	w := newWriter(t, store)
	w.commit(map[string]string{"a.md": "a\n"})
	h := newHost(t, store)
	if _, _, err := h.run(); err != nil {
		t.Fatal(err)
	}
	h.write("b.md", "local\n")
	before := h.baseline()
	rewrite.SetFailHook(func(name string) error {
		t.Errorf("rewrite reached %s", name)
		return nil
	})
	t.Cleanup(func() { rewrite.SetFailHook(nil) })
	s, conflicts, err := h.run()
	if err != nil || len(conflicts) != 0 {
		t.Fatalf("%v, %v", conflicts, err)
	}
	if s.Src != nil {
		t.Fatal("the object cache was synced for R == A")
	}
	if h.read("b.md") != "local\n" || h.read("a.md") != "a\n" {
		t.Fatal("L changed")
	}
	if after := h.baseline(); after.Generation != before.Generation || after.Head != before.Head {
		t.Fatalf("A changed: %d → %d", before.Generation, after.Generation)
	}
}

// A directory that holds files but no record here is adopted with every
// file's base unknown: a file equal to the notebook's is adopted, one that
// differs keeps both texts in one block (NO_RECORD), never one of them
// guessed; a file only L has is kept.
func TestDirectoryWithoutRecordAdoptedWithEveryFileUnknown(t *testing.T) {
	store := memstore.New()
	w := newWriter(t, store)
	w.commit(map[string]string{"same.md": "s\n", "diff.md": "1\n2\n3\n"})
	h := newHost(t, store)
	h.write("same.md", "s\n")
	h.write("diff.md", "1\n2\n3\nmine\n")
	h.write("mine.md", "m\n")
	_, conflicts, err := h.run()
	if err != nil {
		t.Fatal(err)
	}
	if len(conflicts) != 1 || conflicts[0] != "diff.md:"+string(diag.NoRecord) {
		t.Fatalf("conflicts %v, want diff.md alone, as NO_RECORD", conflicts)
	}
	got := h.read("diff.md")
	if !strings.Contains(got, "mine\n") || !strings.Contains(got, "<<<<<<<") {
		t.Fatalf("diff.md = %q, want both texts in one block", got)
	}
	if h.read("same.md") != "s\n" || h.read("mine.md") != "m\n" {
		t.Fatal("an equal or L-only file was changed")
	}
	if b := h.baseline(); b.Generation != 1 {
		t.Fatalf("A is generation %d", b.Generation)
	}
}
