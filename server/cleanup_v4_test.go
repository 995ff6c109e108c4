package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// hookStore calls a hook before each request (tests: a writer that
// dies, a race played out at a chosen request).
type hookStore struct {
	remote.Store
	mu   sync.Mutex
	hook func(op, key string) error
}

func (h *hookStore) call(op, key string) error {
	h.mu.Lock()
	f := h.hook
	h.mu.Unlock()
	if f == nil {
		return nil
	}
	return f(op, key)
}

func (h *hookStore) set(f func(op, key string) error) {
	h.mu.Lock()
	h.hook = f
	h.mu.Unlock()
}

func (h *hookStore) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	if err := h.call("list", prefix); err != nil {
		return nil, err
	}
	return h.Store.List(ctx, prefix)
}

func (h *hookStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := h.call("get", key); err != nil {
		return nil, "", err
	}
	return h.Store.Get(ctx, key)
}

func (h *hookStore) Put(ctx context.Context, key string, data []byte) error {
	if err := h.call("put", key); err != nil {
		return err
	}
	return h.Store.Put(ctx, key, data)
}

func (h *hookStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if err := h.call("replace", key); err != nil {
		return "", err
	}
	return h.Store.ReplaceIfMatch(ctx, key, data, etag)
}

// setWindow sets publish's K and M of a's engine, and so the window its
// sweeps keep: both read them (server/commit: publish.go, cleanup.go).
func (a *agent) setWindow(k, m int) {
	a.e.publishing.Opts.K, a.e.publishing.Opts.M = k, m
	a.e.publishing.Background.K, a.e.publishing.Background.M = k, m
}

// futureID is a publication ID that sorts after every ID made now: a
// version that comes last in the fold order among those built on one
// generation.
func futureID(n int) string { return fmt.Sprintf("ffffffff-ffff-7fff-bfff-%012x", 0xfff000+n) }

// Three engines on a version-4 store with K = M = 2 leave garbage: a
// version declined whose proposer died, a version superseded by its
// proposer's rebuild, a killed call, and a fold that lost its write (its
// marker and group pack orphaned). They commit on past K + M; the sweeps
// the rule picks run in the background of those commits. Afterwards the
// garbage is gone, every accepted proposal and named group pack is
// there, every generation reads (log and show), and verify is clean.
func TestCleanupV4RemovesDecidedGarbage(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			base := newStore(t)
			clock := newStepClock() // publish's waits cost no real time
			small := func(c *Config) {
				c.Sleep, c.Now = clock.Wait, clock.Now
			}
			newEngine := func(store remote.Store, opts ...agentOpt) *agent {
				a := newAgent(t, store, append([]agentOpt{small}, opts...)...)
				a.setWindow(2, 2)
				return a
			}
			a, b := newEngine(base), newEngine(base)
			cStore := &hookStore{Store: base}
			priv := t.TempDir()
			c := newEngine(cStore, func(cfg *Config) { cfg.PrivateRoot = priv })
			a.pull()
			a.write("shared.md", "one\n")
			a.commit("seed") // 1

			// A version the fold declines, its proposer dead.
			w := newV4WriterKM(t, base, 2, 2)
			x := futureID(1)
			w.register(x, "x", map[string]string{"shared.md": "x\n"}) // on 1
			b.pull()
			b.write("shared.md", "b\n")
			b.commit("b") // 2; x declined
			if m := currentV4(t, base); !m.IsDeclined(1, x) {
				t.Fatalf("x not declined: %+v", m.Declined)
			}

			// A version declined, then rebuilt by its proposer: the first
			// is superseded.
			wid := futureID(2)
			w.register(wid, "w", map[string]string{"shared.md": "w\n"}) // on 2
			a.pull()
			a.write("shared.md", "a\n")
			a.commit("a") // 3; wid's version on 2 declined
			if _, err := w.pub.Resume(ctx, wid, 2, func(ctx context.Context, st publish.State) (publish.Change, error) {
				return w.change(ctx, st.Head(), wid, "w", map[string]string{"w.md": "w\n"})
			}); err != nil {
				t.Fatal(err)
			} // 4, from its version on 3

			// A killed call: registered, then the process died; the
			// restarted engine resumes it.
			c.pull()
			c.write("c.md", "c\n")
			died := errors.New("the process died here")
			cStore.set(func(op, key string) error {
				if op == "list" && key == remote.ProposalsPrefix {
					return died
				}
				return nil
			})
			if _, err := c.e.Commit(ctx, "", "c"); err == nil {
				t.Fatal("the killed commit went through")
			}
			cStore.set(nil)
			c.e.Close()
			c = newEngine(base, func(cfg *Config) { cfg.PrivateRoot, cfg.WorkspaceRoot, cfg.DefaultDir = priv, c.ws, c.dir })
			c.commit("c again") // 5: the killed call's version

			// A fold that loses its write: wb folds its version and y (y
			// re-parented: a group pack, and a marker), but before its
			// write lands a's commit folds all three and wins.
			bStore := &hookStore{Store: base}
			wb := newV4WriterKM(t, bStore, 2, 2)
			bid, y := futureID(3), futureID(4)
			wb.register(y, "y", map[string]string{"y.md": "y\n"})
			var lostOnce sync.Once
			bStore.set(func(op, key string) error {
				if op == "replace" && key == remote.CurrentKey {
					lostOnce.Do(func() {
						a.pull()
						a.write("a2.md", "a2\n")
						a.commit("the winner") // 6, wb's at 7, y at 8
					})
				}
				return nil
			})
			if g := wb.commitID(bid, "wb", map[string]string{"wb.md": "wb\n"}); g != 7 {
				t.Fatalf("the loser's commit accepted at %d, want 7 (in the winner's group)", g)
			}
			bStore.set(nil)
			garbage := []string{remote.ProposalKey(1, x), remote.ProposalKey(2, wid)}
			lost := unnamedGroupPacks(t, base)
			if len(lost) != 1 {
				t.Fatalf("orphan group packs: %v, want the lost write's", lost)
			}
			garbage = append(garbage, lost...)
			markers := 0
			objs, _ := base.List(ctx, remote.ProposalsPrefix)
			for _, o := range objs {
				if kind, _, _, _, _ := remote.ParseProposalEntry(o.Key); kind == remote.EntryMarker {
					garbage = append(garbage, o.Key)
					markers++
				}
			}
			if markers == 0 {
				t.Fatal("no fold marker was written")
			}
			for _, k := range garbage {
				if _, err := base.Head(ctx, k); err != nil {
					t.Fatalf("%s before the sweeps: %v", k, err)
				}
			}

			// Commits past the window: sweeps at 16, 24 and 32.
			agents := []*agent{a, b, c}
			for i := 0; currentV4(t, base).Generation < 33; i++ {
				ag := agents[i%3]
				ag.pull()
				ag.write(fmt.Sprintf("f%d.md", i%3), strings.Repeat("x\n", i+1))
				ag.commit(fmt.Sprintf("more %d", i))
			}
			for _, ag := range agents {
				ag.e.Close() // waits for the background sweeps
			}

			for _, k := range garbage {
				if _, err := base.Head(ctx, k); !errors.Is(err, remote.ErrNotFound) {
					t.Errorf("%s left after the sweeps: %v", k, err)
				}
			}
			m := currentV4(t, base)
			_, incs, err := m.Publications(ctx, base, 1, m.Generation)
			if err != nil || uint64(len(incs)) != m.Generation {
				t.Fatalf("history: %d increments, %v", len(incs), err)
			}
			for _, inc := range incs {
				if _, err := base.Head(ctx, inc.ProposalKey()); err != nil {
					t.Fatalf("generation %d's proposal: %v", inc.Generation, err)
				}
				if inc.Group != (remote.GroupRef{}) {
					if _, err := base.Head(ctx, inc.Group.Key()); err != nil {
						t.Fatalf("generation %d's group pack: %v", inc.Generation, err)
					}
				}
			}
			reader := newAgent(t, base)
			reader.pull()
			log, err := reader.e.History(ctx, history.Query{Limit: 100})
			if err != nil || uint64(len(log)) != m.Generation {
				t.Fatalf("log: %d entries, %v", len(log), err)
			}
			for g := uint64(1); g <= m.Generation; g++ {
				if _, err := reader.e.Show(ctx, g, ""); err != nil {
					t.Fatalf("show %d: %v", g, err)
				}
			}
			rep, err := remote.Verify(ctx, base, remote.VerifyOptions{})
			if err != nil || !rep.OK() {
				t.Fatalf("verify: %+v %v", rep, err)
			}
			for _, o := range rep.Orphans {
				if strings.HasPrefix(o.Key, remote.GroupsPrefix) {
					t.Errorf("verify lists an orphan group pack: %s", o.Key)
				}
			}
		})
	}
}

// unnamedGroupPacks lists the group packs no increment names.
func unnamedGroupPacks(t *testing.T, store remote.Store) []string {
	t.Helper()
	ctx := context.Background()
	m := currentV4(t, store)
	_, incs, err := m.Publications(ctx, store, 1, m.Generation)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, inc := range incs {
		if inc.Group != (remote.GroupRef{}) {
			named[inc.Group.Key()] = true
		}
	}
	objs, err := store.List(ctx, remote.GroupsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		if !named[o.Key] {
			out = append(out, o.Key)
		}
	}
	return out
}

// A sweep run before every request of a fold in flight (its reads of
// `current`, its LIST, the GET of the proposal it takes, its marker, its
// group pack, its conditional write) deletes nothing the fold needs or
// names: the fold lands both members, every object `current` names is
// there and verify is clean, while the same sweeps did delete the
// store's decided garbage.
func TestCleanupV4RacingAFold(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			base := newStore(t)
			w := newV4WriterKM(t, base, 2, 2)
			w.commit("seed", map[string]string{"s.md": "1\n"})
			x := futureID(1)
			w.register(x, "x", map[string]string{"s.md": "x\n"})
			w.commit("two", map[string]string{"s.md": "2\n"}) // x declined
			for i := 3; i <= 8; i++ {
				w.commit(fmt.Sprintf("c%d", i), map[string]string{"n.md": strings.Repeat("n\n", i)})
			}
			d := futureID(2)
			w.register(d, "d", map[string]string{"d.md": "d\n"}) // on 8, after the folder's in fold order

			hs := &hookStore{Store: base}
			sweeper := remote.Open(base, remote.Options{})
			var deleted []string
			sweeps := 0
			// The fold makes some requests side by side (its marker
			// beside its reads): one sweep at a time.
			var sweeping sync.Mutex
			hs.set(func(op, key string) error {
				sweeping.Lock()
				defer sweeping.Unlock()
				res, err := sweeper.CleanupV4(ctx, remote.CleanupV4Options{Window: 4})
				if err != nil {
					return err
				}
				sweeps++
				deleted = append(deleted, res.Deleted...)
				return nil
			})
			f := newV4WriterKM(t, hs, 2, 2)
			fid := orderedIDs(1)[0]
			if g := f.commitID(fid, "f", map[string]string{"f.md": "f\n"}); g != 9 {
				t.Fatalf("the folder's commit at %d, want 9", g)
			}
			hs.set(nil)
			m := currentV4(t, base)
			if m.Generation != 10 || m.AcceptedAt(d) != 10 {
				t.Fatalf("current %d, d accepted at %d", m.Generation, m.AcceptedAt(d))
			}
			if inc, _ := m.Increment(10); inc.Group == (remote.GroupRef{}) {
				t.Fatal("d was not re-parented: no group pack raced")
			}
			if !slices.Contains(deleted, remote.ProposalKey(1, x)) {
				t.Fatalf("%d sweeps deleted %v, not the declined version", sweeps, deleted)
			}
			if len(unnamedGroupPacks(t, base)) != 0 {
				t.Fatal("an unnamed group pack")
			}
			rep, err := remote.Verify(ctx, base, remote.VerifyOptions{})
			if err != nil || !rep.OK() || rep.Generation != 10 {
				t.Fatalf("verify: %+v %v", rep, err)
			}
			reader := newAgent(t, base)
			reader.pull()
			equalMaps(t, "files", reader.files(), map[string]string{"s.md": "2\n", "n.md": strings.Repeat("n\n", 8), "f.md": "f\n", "d.md": "d\n"})
		})
	}
}
