package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// One writer's commits are accepted at 1, 2, 3, each reporting its own
// generation, and `current` is version 4 from the first.
func TestV4OneWriter(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		for _, serve := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/longLived=%v", name, serve), func(t *testing.T) {
				store := newStore(t)
				a := newAgent(t, store, func(c *Config) { c.LongLived = serve })
				a.pull()
				for i := 1; i <= 3; i++ {
					a.write("a.md", strings.Repeat("line\n", i))
					if res := a.commit(fmt.Sprintf("c%d", i)); res.Generation != uint64(i) || len(res.Files) != 1 {
						t.Fatalf("commit %d: %+v", i, res)
					}
				}
				if m := currentV4(t, store); m.Generation != 3 || len(m.Recent) != 3 {
					t.Fatalf("current: generation %d, recent %d", m.Generation, len(m.Recent))
				}
				// Nothing changed: nothing published.
				if res := a.commit("again"); res.Generation != 3 {
					t.Fatalf("empty commit: %+v", res)
				}
				b := newAgent(t, store)
				b.pull()
				equalMaps(t, "reader", b.files(), map[string]string{"a.md": "line\nline\nline\n"})
				// Another writer's commit, then ours: built on it.
				b.write("b.md", "b\n")
				b.commit("b")
				a.write("a.md", "line\n")
				if res := a.commit("c5"); res.Generation != 5 || !reflect.DeepEqual(stats(res.BroughtIn), map[string][2]int{"b.md": {1, 0}}) {
					t.Fatalf("commit after another's: %+v", res)
				}
				equalMaps(t, "writer", a.files(), map[string]string{"a.md": "line\n", "b.md": "b\n"})
			})
		}
	}
}

// Six engines, each committing from 8 directories at once: 48 commits
// report 48 distinct generations 1..48, the log lists 48, and each
// directory holds exactly its generation's tree (the files of the
// commits accepted at or below it).
func TestV4SixEnginesConcurrent(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store := newStore(t)
			const engines, dirs = 6, 8
			type dir struct {
				a    *agent
				path string
				file string
				gen  uint64
			}
			var all []*dir
			for i := range engines {
				a := newAgent(t, store)
				for j := range dirs {
					d := &dir{a: a, path: filepath.Join(a.ws, fmt.Sprintf("d%d", j)), file: fmt.Sprintf("e%d-d%d.md", i, j)}
					if _, err := a.e.Pull(ctx, d.path); err != nil {
						t.Fatal(err)
					}
					all = append(all, d)
				}
			}
			var wg sync.WaitGroup
			errs := make([]error, len(all))
			for k, d := range all {
				writeFileT(t, filepath.Join(d.path, d.file), d.file+"\n")
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := d.a.e.Commit(ctx, d.path, "add "+d.file)
					if err == nil {
						d.gen = res.Generation
					}
					errs[k] = err
				}()
			}
			wg.Wait()
			var gens []uint64
			byGen := map[uint64]*dir{}
			for k, d := range all {
				if errs[k] != nil {
					t.Fatalf("commit %s: %v", d.file, errs[k])
				}
				gens = append(gens, d.gen)
				byGen[d.gen] = d
			}
			slices.Sort(gens)
			for i, g := range gens {
				if g != uint64(i+1) {
					t.Fatalf("reported generations are not 1..48: %v", gens)
				}
			}
			for _, d := range all {
				want := map[string]string{}
				for g := uint64(1); g <= d.gen; g++ {
					want[byGen[g].file] = byGen[g].file + "\n"
				}
				equalMaps(t, "directory of "+d.file, dirFiles(t, d.path), want)
			}
			log, err := all[0].a.e.History(ctx, history.Query{Limit: 100})
			if err != nil || len(log) != 48 {
				t.Fatalf("history: %d entries, %v", len(log), err)
			}
			for _, h := range log {
				if d := byGen[h.Generation]; h.Message != "add "+d.file {
					t.Fatalf("generation %d is %q, reported by %s", h.Generation, h.Message, d.file)
				}
			}
			if rep, err := remote.Verify(ctx, store, remote.VerifyOptions{}); err != nil || !rep.OK() {
				t.Fatalf("verify: %+v %v", rep, err)
			}
		})
	}
}

// A commit upgrades a version-3 store (the fixture) with its write;
// another engine then reads it and publishes by version 4 too, leaving no
// version-3 increment behind; a binary that predates version 4
// (its decoder) refuses the store naming the version.
func TestV4UpgradeFromV3(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		t.Run(name, func(t *testing.T) { testV4UpgradeFromV3(t, newStore(t)) })
	}
}

func testV4UpgradeFromV3(t *testing.T, store remote.Store) {
	ctx := context.Background()
	remotetest.CopyFixture(t, filepath.Join("..", "remote", "testdata", "v3-store"), store)
	data, _, err := store.Get(ctx, remote.CurrentKey)
	if err != nil {
		t.Fatal(err)
	}
	m3, err := remote.DecodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	w := newAgent(t, store)
	w.pull()
	before := w.files()
	w.write("upgraded.md", "by v4\n")
	if res := w.commit("first v4"); res.Generation != m3.Generation+1 {
		t.Fatalf("the upgrade's generation: %d after %d", res.Generation, m3.Generation)
	}
	m := currentV4(t, store)
	if m.Upgraded != m3.Generation+1 {
		t.Fatalf("upgraded at %d", m.Upgraded)
	}
	before["upgraded.md"] = "by v4\n"

	priv := t.TempDir()
	r := newAgent(t, store, func(c *Config) { c.PrivateRoot = priv })
	r.pull()
	equalMaps(t, "read after the upgrade", r.files(), before)
	// A new process (a CLI commit) that has not read `current` before
	// its commit publishes by version 4 on the upgraded store.
	r.e.Close()
	r = newAgent(t, store, func(c *Config) { c.PrivateRoot, c.WorkspaceRoot, c.DefaultDir = priv, r.ws, r.dir })
	r.write("later.md", "v4 engine\n")
	if res := r.commit("from another engine"); res.Generation != m.Generation+1 {
		t.Fatalf("commit: %+v", res)
	}
	if currentV4(t, store).Generation != m.Generation+1 {
		t.Fatal("not published by version 4")
	}
	incs, err := store.List(ctx, remote.IncrementsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range incs {
		if _, g, _, err := remote.ParsePackKey(o.Key); err != nil || g > m3.Generation {
			t.Fatalf("a version-3 increment %s was written after the upgrade", o.Key)
		}
	}
	// History older than the upgrade still reads.
	if log, err := r.e.History(ctx, history.Query{Limit: 100}); err != nil || len(log) < 3 || log[len(log)-1].Generation > m3.Generation {
		t.Fatalf("history across the upgrade: %d entries, %v", len(log), err)
	}
	if rep, err := remote.Verify(ctx, store, remote.VerifyOptions{}); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}

	data, _, _ = store.Get(ctx, remote.CurrentKey)
	_, err = remote.DecodeManifest(data) // what a binary before version 4 runs
	var fv *remote.FormatVersionError
	if !errors.As(err, &fv) || fv.Version != 4 {
		t.Fatalf("an older decoder: %v", err)
	}
	if de := dircall.MapErr(fmt.Errorf("read current: %w", err)); de.Reason != diag.ReasonFormatNewer {
		t.Fatalf("mapped to %s", de.Reason)
	}
}

// A commit whose process dies after registering its proposal (here: the
// LIST after the registration fails, the same state on disk) is resumed
// by the next commit under the same publication ID, and accepted exactly
// once: whether another writer's fold took it meanwhile or not.
func TestV4ResumeAfterRegister(t *testing.T) {
	for _, folded := range []bool{false, true} {
		t.Run(fmt.Sprintf("folded=%v", folded), func(t *testing.T) {
			ctx := context.Background()
			store := memstore.New()
			priv := t.TempDir()
			a := newAgent(t, store, func(c *Config) { c.PrivateRoot = priv })
			a.pull()
			a.write("mine.md", "mine\n")
			commitDiesAfterRegister(t, store, a, "mine")
			objs, _ := store.List(ctx, remote.ProposalsPrefix)
			if len(objs) != 1 {
				t.Fatalf("registered: %v", objs)
			}
			// An edit made after the crash: published by the next call
			// too, as a publication of its own.
			a.write("extra.md", "extra\n")
			want := map[string]string{"mine.md": "mine\n", "extra.md": "extra\n"}
			if folded {
				b := newAgent(t, store)
				b.pull()
				b.write("theirs.md", "theirs\n")
				b.commit("theirs")
				want["theirs.md"] = "theirs\n"
			}
			a.e.Close()
			// The restarted engine, same private root and directory.
			a2 := newAgent(t, store, func(c *Config) { c.PrivateRoot, c.WorkspaceRoot, c.DefaultDir = priv, a.ws, a.dir })
			res := a2.commit("mine again")
			log, err := a2.e.History(ctx, history.Query{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			mine := 0
			for _, h := range log {
				switch h.Message {
				case "mine":
					mine++
				case "mine again":
					if res.Generation != h.Generation || !reflect.DeepEqual(changeStats(h.Files), map[string][2]int{"extra.md": {1, 0}}) {
						t.Fatalf("reported %d; the new edit, accepted at %d: %+v", res.Generation, h.Generation, h)
					}
				}
			}
			if mine != 1 || len(log) != len(want) {
				t.Fatalf("mine accepted %d times in %d generations", mine, len(log))
			}
			equalMaps(t, "directory", a2.files(), want)
		})
	}
}

// commitDiesAfterRegister runs a's commit until its proposal is
// registered and then fails it where a process dying there would leave
// the same state on disk: the LIST after the registration.
func commitDiesAfterRegister(t *testing.T, store *memstore.Mem, a *agent, message string) {
	t.Helper()
	store.Inject(memstore.Fault{Op: memstore.OpList, KeyPrefix: remote.ProposalsPrefix, Before: errors.New("the process died here")})
	if _, err := a.e.Commit(context.Background(), "", message); err == nil {
		t.Fatal("the commit went through")
	}
	memstore.AssertFaultsFired(t, store)
}

// A resumed commit found accepted, with nothing edited since, reports its
// own change at its own generation, and what the synchronisation wrote into
// its directory (another writer's commit folded after it) as brought in:
// never the others' files as its own.
func TestV4ResumedCommitReportsItsOwnChange(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	priv := t.TempDir()
	a := newAgent(t, store, func(c *Config) { c.PrivateRoot = priv })
	a.pull()
	a.write("mine.md", "mine\n")
	commitDiesAfterRegister(t, store, a, "mine")
	b := newAgent(t, store)
	b.pull()
	b.write("theirs.md", "theirs\n")
	b.commit("theirs")
	a.e.Close()
	a2 := newAgent(t, store, func(c *Config) { c.PrivateRoot, c.WorkspaceRoot, c.DefaultDir = priv, a.ws, a.dir })
	res := a2.commit("mine again")
	log, err := a2.e.History(ctx, history.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var mine uint64
	for _, h := range log {
		if h.Message == "mine" {
			mine = h.Generation
		}
	}
	if mine == 0 || res.Generation != mine {
		t.Fatalf("reported generation %d; mine was accepted at %d", res.Generation, mine)
	}
	if got := stats(res.Files); !reflect.DeepEqual(got, map[string][2]int{"mine.md": {1, 0}}) {
		t.Fatalf("own files %v, want mine.md only", got)
	}
	if got := stats(res.BroughtIn); !reflect.DeepEqual(got, map[string][2]int{"theirs.md": {1, 0}}) {
		t.Fatalf("brought in %v, want theirs.md", got)
	}
	equalMaps(t, "directory", a2.files(), map[string]string{"mine.md": "mine\n", "theirs.md": "theirs\n"})
}

func writeFileT(t *testing.T, p, content string) {
	t.Helper()
	a := &agent{t: t, dir: filepath.Dir(p)}
	a.write(filepath.Base(p), content)
}

func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	return (&agent{t: t, dir: dir}).files()
}

// A version a fold declines (it conflicts with a proposal folded before
// it) is rebuilt on the new state; when that rebuild conflicts, the
// commit ends as a version-3 one does: conflict blocks in L, the new
// state recorded, nothing of it published; resolved, it commits.
func TestV4DeclinedRebuildConflicts(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	w := newV4Writer(t, store)
	w.commit("seed", map[string]string{"x.md": "1\n2\n3\n"})
	clock := newStepClock()
	a := newAgent(t, store, func(c *Config) { c.Sleep, c.Now = clock.Wait, clock.Now })
	a.pull()
	// A proposal whose writer died, first in the fold order (its ID's
	// time is the earliest): the engine waits for it, then folds it.
	w.register("00000000-0001-7000-8000-000000000001", "theirs", map[string]string{"x.md": "1\nB\n3\n"})
	a.write("x.md", "1\nA\n3\n")
	_, err := a.e.Commit(ctx, "", "mine")
	de := domainErr(t, err, diag.CodeContentConflict, diag.ReasonMergeConflict)
	if got := fileReasons(de); len(got) != 1 || !strings.HasPrefix(got[0], "x.md:") {
		t.Fatalf("conflicts: %v", got)
	}
	if m := currentV4(t, store); m.Generation != 2 || len(m.Declined) != 1 || m.Declined[0].Proposal != 1 {
		t.Fatalf("current: generation %d, declined %+v", m.Generation, m.Declined)
	}
	if got := a.read("x.md"); !strings.Contains(got, "A\n") || !strings.Contains(got, "B\n") || !strings.Contains(got, "<<<<<<<") {
		t.Fatalf("x.md: %q", got)
	}
	a.write("x.md", "1\nA and B\n3\n")
	if res := a.commit("resolved"); res.Generation != 3 {
		t.Fatalf("resolved: %+v", res)
	}
	b := newAgent(t, store)
	b.pull()
	equalMaps(t, "accepted", b.files(), map[string]string{"x.md": "1\nA and B\n3\n"})
}

// A commit whose merge with the state it read conflicts leaves conflict
// blocks in L and registers nothing, as a version-3 commit does.
func TestV4CommitConflicts(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("x.md", "1\n2\n3\n")
	a.commit("seed")
	b.pull()
	b.write("x.md", "1\nB\n3\n")
	b.commit("b")
	a.write("x.md", "1\nA\n3\n")
	_, err := a.e.Commit(ctx, "", "a")
	domainErr(t, err, diag.CodeContentConflict, diag.ReasonMergeConflict)
	if got := a.read("x.md"); !strings.Contains(got, "<<<<<<<") {
		t.Fatalf("x.md: %q", got)
	}
	objs, err := store.List(ctx, remote.ProposalsPrefix)
	if err != nil || len(objs) != 2 {
		t.Fatalf("proposals: %v %v", objs, err)
	}
	a.write("x.md", "1\nA, B\n3\n")
	if res := a.commit("resolved"); res.Generation != 3 {
		t.Fatalf("resolved: %+v", res)
	}
}

// A commit whose proposal never reached the store (its process died, or
// here its PUT failed, after the pending record) leaves a record naming
// an unregistered publication ID; the next commit resumes that call,
// registers it and is accepted once, instead of waiting for a version no
// LIST will ever show (the chaos campaign at format 4 found the wait: it
// spun on LIST and GET until cancelled).
func TestV4ResumeOfACallThatNeverRegistered(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("a.md", "a\n")
	a.commit("seed")
	a.write("a.md", "a\nb\n")
	store.Inject(memstore.Fault{Op: memstore.OpPut, KeyPrefix: remote.ProposalsPrefix, Before: errors.New("injected: died before the registration")})
	if _, err := a.e.Commit(context.Background(), "", "b"); err == nil {
		t.Fatal("the commit whose registration failed reported success")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang detector, not a timing
	defer cancel()
	res, err := a.e.Commit(ctx, "", "b again")
	if err != nil || res.Generation != 2 {
		t.Fatalf("the next commit: %+v, %v; want generation 2", res, err)
	}
	if m := currentV4(t, store); m.Generation != 2 || len(m.Recent) != 2 {
		t.Fatalf("current: generation %d, %d IDs in recent, want 2 and 2", m.Generation, len(m.Recent))
	}
	b := newAgent(t, store)
	b.pull()
	equalMaps(t, "reader", b.files(), map[string]string{"a.md": "a\nb\n"})
}
