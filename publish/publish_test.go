package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// fakeClock advances only when waited on, and records the waits.
type fakeClock struct {
	now   time.Time
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Wait(ctx context.Context, d time.Duration) error {
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// allPacks is a test's catch-up: every proposal and group pack in the
// store, and the increment and checkpoint packs of a store written by
// version 3 (upgrade_test.go).
func allPacks(st remote.Store) Objects {
	return func(ctx context.Context, _ State) (cas.Source, error) {
		var src packsSource
		for _, prefix := range []string{remote.ProposalsPrefix, remote.GroupsPrefix, remote.IncrementsPrefix, remote.CheckpointsPrefix} {
			objs, err := st.List(ctx, prefix)
			if err != nil {
				return nil, err
			}
			for _, o := range objs {
				data, _, err := st.Get(ctx, o.Key)
				if err != nil {
					return nil, err
				}
				if kind, _, _, _, _ := remote.ParseProposalEntry(o.Key); kind == remote.EntryProposal {
					if _, data, err = remote.DecodeProposalV4(o.Key, data); err != nil {
						continue // a foreign registration
					}
				} else if kind == remote.EntryMarker || kind == remote.EntryRollup || kind == remote.EntryCheckpoint {
					continue
				}
				p, err := cas.OpenPack(data)
				if err != nil {
					return nil, err
				}
				src = append(src, p)
			}
		}
		return src, nil
	}
}

// change builds a commit that sets files (nil content: removes) on the
// state's head.
func change(src Objects, id string, files map[string]*string) Build {
	return func(ctx context.Context, st State) (Change, error) {
		s, err := src(ctx, st)
		if err != nil {
			return Change{}, err
		}
		var tree cas.ID
		if !st.Head().IsZero() {
			if tree, _, err = commitFiles(s, st.Head()); err != nil {
				return Change{}, err
			}
		}
		sink := cas.NewObjectSet()
		changes := map[string]cas.ID{}
		for p, c := range files {
			if c == nil {
				changes[p] = cas.ID{}
				continue
			}
			if changes[p], err = cas.WriteFile(sink, []byte(*c)); err != nil {
				return Change{}, err
			}
		}
		root, err := cas.UpdateTree(multi{sink, s}, sink, tree, changes)
		if err != nil {
			return Change{}, err
		}
		c := cas.EncodeCommit(cas.Commit{Tree: root, Parent: st.Head(), Publication: id, Time: time.UnixMilli(1), Message: []byte(id)})
		if err := sink.Put(c); err != nil {
			return Change{}, err
		}
		pack, err := packOf(sink)
		return Change{Head: c.ID, Pack: pack, Author: "test"}, err
	}
}

func str(s string) *string { return &s }

type env struct {
	t     *testing.T
	mem   *memstore.Mem
	store remote.Store
	clock *fakeClock
	pub   *Publisher
	n     int
}

func newEnv(t *testing.T, store func(*memstore.Mem) remote.Store) *env {
	e := &env{t: t, mem: memstore.New(), clock: &fakeClock{now: time.UnixMilli(1_700_000_000_000)}}
	e.store = e.mem
	if store != nil {
		e.store = store(e.mem)
	}
	var err error
	e.pub, err = New(e.store, Options{Store: storeID, Clock: e.clock, Objects: allPacks(e.mem), Parallel: 1,
		Jitter: func() float64 { return 0.5 }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) id() string {
	e.n++
	return fmt.Sprintf("01900000-0000-7000-8000-%012x", e.n)
}

func (e *env) commit(files map[string]*string) Result {
	e.t.Helper()
	return e.commitAs(e.id(), files)
}

func (e *env) commitAs(id string, files map[string]*string) Result {
	e.t.Helper()
	r, err := e.pub.Commit(context.Background(), id, change(allPacks(e.mem), id, files))
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// register PUTs a proposal built on the current state without folding
// it, as a writer that died right after registering would leave it.
func (e *env) register(files map[string]*string) string {
	e.t.Helper()
	ctx := context.Background()
	st := State{}
	if data, etag, err := e.mem.Get(ctx, remote.CurrentKey); err == nil {
		m, err := remote.DecodeManifestV4(data)
		if err != nil {
			e.t.Fatal(err)
		}
		st = State{Manifest: m, ETag: etag}
	}
	id := e.id()
	ch, err := change(allPacks(e.mem), id, files)(ctx, st)
	if err != nil {
		e.t.Fatal(err)
	}
	data, err := remote.EncodeProposalV4(remote.ProposalV4{Publication: id, Parent: st.Generation(), ParentHead: st.Head(), Head: ch.Head, Time: 1}, ch.Pack)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.mem.Put(ctx, remote.ProposalKey(st.Generation(), id), data); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *env) current() *remote.ManifestV4 {
	e.t.Helper()
	data, _, err := e.mem.Get(context.Background(), remote.CurrentKey)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := remote.DecodeManifestV4(data)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func (e *env) files(head cas.ID) map[string]string {
	e.t.Helper()
	src, _ := allPacks(e.mem)(context.Background(), State{})
	_, ids, err := commitFiles(src, head)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for p, id := range ids {
		b, err := cas.ReadFile(src, id)
		if err != nil {
			e.t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

// One fold merges what merges and declines the rest, each whole: a path
// both changed merged three-way, a conflict, a modify/delete, a
// case-folded twin and a file against a directory declined.
func TestFoldMergesAndDeclines(t *testing.T) {
	e := newEnv(t, nil)
	e.commit(map[string]*string{"notes.md": str("a\nb\nc\n"), "gone.md": str("x\n"), "dir/f.md": str("f\n")})
	folder := e.id()                                                          // first in the fold order: the others register after it, on the same generation
	merges := e.register(map[string]*string{"notes.md": str("a\nb\nc\nd\n")}) // appends: merges with the folder's
	conflict := e.register(map[string]*string{"notes.md": str("A\nb\nc\n")})  // rewrites line 1, as the folder does
	modDel := e.register(map[string]*string{"gone.md": str("y\n")})           // the folder removes gone.md
	twin := e.register(map[string]*string{"Other.md": str("o\n")})            // the folder adds other.md
	fileDir := e.register(map[string]*string{"x/y": str("y\n")})              // x is the folder's file
	caseDir := e.register(map[string]*string{"New/g.md": str("g\n")})         // the folder adds new/h.md
	r := e.commitAs(folder, map[string]*string{"notes.md": str("a2\nb\nc\n"), "gone.md": nil, "other.md": str("p\n"), "x": str("x\n"), "new/h.md": str("h\n")})
	m := e.current()
	if r.Generation != 2 {
		t.Fatalf("the folder (built on 1, first in the order) at generation %d", r.Generation)
	}
	if g := m.AcceptedAt(merges); g == 0 {
		t.Fatalf("the merging proposal was not accepted: %+v", m.Declined)
	}
	for name, id := range map[string]string{"conflict": conflict, "modify/delete": modDel, "twin": twin, "file/directory": fileDir, "directory twin": caseDir} {
		if m.AcceptedAt(id) != 0 || !slices.ContainsFunc(m.Declined, func(d remote.Declined) bool { return d.Publication == id }) {
			t.Errorf("%s: not declined (accepted at %d)", name, m.AcceptedAt(id))
		}
	}
	got := e.files(m.Head)
	if got["notes.md"] != "a2\nb\nc\nd\n" {
		t.Errorf("notes.md merged as %q", got["notes.md"])
	}
	if _, ok := got["gone.md"]; ok || got["other.md"] != "p\n" || got["x"] != "x\n" {
		t.Errorf("tree %v", got)
	}
	// Each member's head holds its change at its own generation.
	inc, _ := m.Increment(m.AcceptedAt(merges))
	if f := e.files(inc.Head); !strings.HasSuffix(f["notes.md"], "d\n") {
		t.Errorf("the merged member's own generation: %q", f["notes.md"])
	}
}

// rateLimited answers 429 to the first n conditional writes.
type rateLimited struct {
	remote.Store
	n int
}

func (s *rateLimited) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if s.n > 0 {
		s.n--
		return "", fmt.Errorf("slow down: %w", remote.ErrRateLimited)
	}
	return s.Store.ReplaceIfMatch(ctx, key, data, etag)
}

// A 429 is a lost race with one jittered estimate of back-off, not a
// failure: the commit is accepted after it.
func TestRateLimitedWriteBacksOff(t *testing.T) {
	rl := &rateLimited{}
	e := newEnv(t, func(m *memstore.Mem) remote.Store { rl.Store = m; return rl })
	e.commit(map[string]*string{"a": str("1\n")})
	rl.n = 2
	e.clock.waits = nil
	r := e.commit(map[string]*string{"a": str("2\n")})
	if r.Generation != 2 || rl.n != 0 {
		t.Fatalf("generation %d, %d 429s left", r.Generation, rl.n)
	}
	backoffs := 0
	for _, d := range e.clock.waits {
		if d == 200*time.Millisecond { // (0.5 + jitter 0.5) x the estimate
			backoffs++
		}
	}
	if backoffs < 2 {
		t.Fatalf("waits %v: want two back-offs of one estimate", e.clock.waits)
	}
}

// A version-3 registration left by an upgrade sits at a key of the same
// form; a version-4 folder declines it as not foldable, and a waiter
// behind it takes over.
func TestForeignRegistrationIsDeclined(t *testing.T) {
	e := newEnv(t, nil)
	e.commit(map[string]*string{"a": str("1\n")})
	id := e.id()
	v3 := remote.EncodeRegistration(remote.ProposalDescriptor{Publication: id, ParentGeneration: 1, Head: cas.Sum([]byte("h")),
		Pack: remote.PackRef{Sum: cas.Sum([]byte("p")), Size: 1}}, []byte("p"))
	// Its ID sorts before ours: it is first in the fold order.
	if err := e.mem.Put(context.Background(), remote.ProposalKey(1, id), v3); err != nil {
		t.Fatal(err)
	}
	r := e.commit(map[string]*string{"a": str("2\n")})
	m := e.current()
	if r.Generation != 2 || !m.IsDeclined(1, id) {
		t.Fatalf("generation %d, declined %+v", r.Generation, m.Declined)
	}
}

// A group larger than the tail: the write folds the tail into segments
// (stored before it), every member at its own generation, and a member
// whose generation left the tail finds its head through the segments.
func TestLargeGroupFoldsTheTail(t *testing.T) {
	e := newEnv(t, nil)
	e.commit(map[string]*string{"log.md": str("0\n")})
	var ids []string
	for i := 0; i < 20; i++ {
		ids = append(ids, e.register(map[string]*string{fmt.Sprintf("f%02d.md", i): str(fmt.Sprintf("%d\n", i))}))
	}
	r := e.commit(map[string]*string{"last.md": str("x\n")})
	m := e.current()
	if r.Generation != 22 || m.Generation != 22 || len(m.Segments) == 0 {
		t.Fatalf("generation %d, current %d, %d segments", r.Generation, m.Generation, len(m.Segments))
	}
	for i, id := range ids {
		if g := m.AcceptedAt(id); g != uint64(2+i) {
			t.Fatalf("proposal %d accepted at %d", i, g)
		}
	}
	for _, s := range m.Segments {
		if _, _, err := e.mem.Get(context.Background(), s.Key()); err != nil {
			t.Fatalf("segment %s: %v", s.Key(), err)
		}
	}
	// A waiter of generation 2 (out of the tail) reads its head.
	w := &call{p: e.pub, id: ids[0], c: State{Manifest: m}}
	head, err := w.headAt(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if f := e.files(head); f["f00.md"] != "0\n" || f["f01.md"] != "" {
		t.Fatalf("generation 2's tree: %v", f)
	}
	// Every member below the tail finds its head by the parents of the
	// tail's oldest head in the objects caught up to the state, with no
	// GET of a segment, and it is the head the segments name.
	walker, err := New(segmentless{e.mem}, Options{Store: storeID, Clock: e.clock, Objects: allPacks(e.mem)})
	if err != nil {
		t.Fatal(err)
	}
	noObjects := func(context.Context, State) (cas.Source, error) { return nil, errors.New("no objects") }
	reader, err := New(e.mem, Options{Store: storeID, Clock: e.clock, Objects: noObjects})
	if err != nil {
		t.Fatal(err)
	}
	for g := uint64(2); g < m.Increments[0].Generation; g++ {
		got, err := (&call{p: walker, c: State{Manifest: m}}).headAt(context.Background(), g)
		if err != nil {
			t.Fatalf("generation %d by its parents: %v", g, err)
		}
		want, err := (&call{p: reader, c: State{Manifest: m}}).headAt(context.Background(), g)
		if err != nil || got != want {
			t.Fatalf("generation %d: %s by its parents, %s in the segments (%v)", g, got, want, err)
		}
	}
}

// segmentless fails every GET of a segment.
type segmentless struct{ remote.Store }

func (s segmentless) Get(ctx context.Context, key string) ([]byte, string, error) {
	if strings.HasPrefix(key, "index/") {
		return nil, "", errors.New("a segment was read")
	}
	return s.Store.Get(ctx, key)
}

func TestNewRefusesAWindowBeyondRecent(t *testing.T) {
	_, err := New(memstore.New(), Options{Store: storeID, Clock: &fakeClock{}, Objects: allPacks(nil), K: 200, M: 100})
	if err == nil {
		t.Fatal("K + M beyond recent")
	}
	if _, err := New(memstore.New(), Options{Store: "x", Clock: &fakeClock{}, Objects: allPacks(nil)}); err == nil {
		t.Fatal("a bad store ID")
	}
}

// A call whose version was accepted long ago, beyond the `recent`
// window, finds its generation in the history (the segments), and a call
// that was not accepted reads the history once.
func TestAcceptanceReadsTheHistory(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	var m *remote.ManifestV4
	ours := "01900000-0000-7000-8000-00000000aaaa"
	for g := 1; g <= 300; g++ {
		id := fmt.Sprintf("01900000-0000-7000-8000-%012x", g)
		if g == 10 {
			id = ours
		}
		var parent uint64
		if m != nil {
			parent = m.Generation
		}
		next, segs, err := remote.NextV4(m, storeID, 1, []remote.MemberV4{{Publication: id, Proposal: parent, Head: cas.Sum([]byte(id))}}, remote.GroupRef{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range segs {
			if err := e.mem.Put(ctx, s.Key, s.Data); err != nil {
				t.Fatal(err)
			}
		}
		m = next
	}
	if m.AcceptedAt(ours) != 0 {
		t.Fatal("the test needs generation 10 out of recent")
	}
	w := &call{p: e.pub, id: ours, first: 5, have: true, c: State{Manifest: m}}
	if g, err := w.acceptance(ctx); err != nil || g != 10 {
		t.Fatalf("accepted at %d, %v", g, err)
	}
	if r, err := w.accepted(ctx, 10); err != nil || r.Head != cas.Sum([]byte(ours)) {
		t.Fatalf("head of generation 10: %v", err)
	}
	other := &call{p: e.pub, id: "01900000-0000-7000-8000-00000000bbbb", first: 5, have: true, c: State{Manifest: m}}
	if g, err := other.acceptance(ctx); err != nil || g != 0 {
		t.Fatalf("an ID never accepted: %d, %v", g, err)
	}
	gets := e.mem.Calls(memstore.OpGet)
	if g, err := other.acceptance(ctx); err != nil || g != 0 || e.mem.Calls(memstore.OpGet) != gets {
		t.Fatalf("the history read again: %d, %v", g, err)
	}
}

// A call adopted after a crash (Resume) whose version another writer
// accepted meanwhile reports that generation and registers nothing; one
// whose version is still pending is folded.
func TestResumeAdoptsAnAcceptedCall(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.commit(map[string]*string{"a": str("1\n")})
	dead := e.register(map[string]*string{"b": str("dead\n")})
	e.commit(map[string]*string{"c": str("2\n")}) // folds the dead writer's proposal
	m := e.current()
	g := m.AcceptedAt(dead)
	if g == 0 {
		t.Fatal("the registered proposal was not folded")
	}
	puts := e.mem.Calls(memstore.OpPut)
	r, err := e.pub.Resume(ctx, dead, 1, func(context.Context, State) (Change, error) {
		return Change{}, fmt.Errorf("built again")
	})
	if err != nil || r.Generation != g || e.mem.Calls(memstore.OpPut) != puts {
		t.Fatalf("resume: generation %d (want %d), %v, %d PUTs", r.Generation, g, err, e.mem.Calls(memstore.OpPut)-puts)
	}
	pending := e.register(map[string]*string{"d": str("pending\n")})
	r, err = e.pub.Resume(ctx, pending, m.Generation, change(allPacks(e.mem), pending, nil))
	if err != nil || e.current().AcceptedAt(pending) != r.Generation || r.Generation == 0 {
		t.Fatalf("resume of a pending version: %+v, %v", r, err)
	}
}

// packOf packs every object of sink in ID order, so a build's pack is the
// same bytes whichever order the objects were written in.
func packOf(sink *cas.ObjectSet) ([]byte, error) {
	pw := cas.NewPackWriter()
	ids := sink.IDs()
	slices.SortFunc(ids, func(a, b cas.ID) int { return bytes.Compare(a[:], b[:]) })
	for _, oid := range ids {
		o, _ := sink.Get(oid)
		if err := pw.Put(o); err != nil {
			return nil, err
		}
	}
	return pw.Finish()
}

// counting counts a writer's requests by kind.
type counting struct {
	remote.Store
	lists, all int
}

func (s *counting) Get(ctx context.Context, key string) ([]byte, string, error) {
	s.all++
	return s.Store.Get(ctx, key)
}
func (s *counting) Put(ctx context.Context, key string, data []byte) error {
	s.all++
	return s.Store.Put(ctx, key, data)
}
func (s *counting) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	s.all++
	s.lists++
	return s.Store.List(ctx, prefix)
}
func (s *counting) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	s.all++
	return s.Store.ReplaceIfMatch(ctx, key, data, etag)
}
func (s *counting) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	s.all++
	return s.Store.CreateIfAbsent(ctx, key, data)
}

// The LIST-skip rule: a writer alone makes three requests per commit
// (GET current, PUT proposal, the conditional write) for seven commits
// after one that LISTed, then LISTs again; a proposal registered by
// someone else meanwhile is folded by that LIST, within eight commits.
func TestAWriterAloneSkipsTheList(t *testing.T) {
	var cs *counting
	e := newEnv(t, func(m *memstore.Mem) remote.Store { cs = &counting{Store: m}; return cs })
	var prev Streak
	var other string
	for i := 1; i <= 10; i++ {
		lists, all := cs.lists, cs.all
		id := e.id()
		r, err := e.pub.CommitAfter(context.Background(), id, prev, change(allPacks(e.mem), id, map[string]*string{"a.md": str(fmt.Sprintf("%d\n", i))}))
		if err != nil {
			t.Fatal(err)
		}
		skipped := cs.lists == lists
		switch {
		case i == 1 || i == 9 || i == 10:
			if skipped {
				t.Fatalf("commit %d skipped the LIST (streak %+v)", i, prev)
			}
		default:
			if !skipped || cs.all-all != 3 {
				t.Fatalf("commit %d: %d requests, LIST skipped %v; want 3 without a LIST (streak %+v)", i, cs.all-all, skipped, prev)
			}
			if r.Streak != (Streak{Generation: r.Generation, Skipped: i - 1}) {
				t.Fatalf("commit %d: streak %+v", i, r.Streak)
			}
		}
		if i == 1 {
			other = e.register(map[string]*string{"b.md": str("b\n")}) // never folded by a skipping commit
			// A registered rollup descriptor of the block 5..8 (its
			// pack's bytes do not matter to the fold): copied by the
			// first fold that LISTs once generation 8 is accepted, never
			// by a skipping one, and never read by one.
			k, data, err := remote.EncodeRegistered(remote.Registered{Kind: remote.EntryRollup,
				Rollup: remote.RollupRef{Level: 2, First: 5, Sum: cas.Sum([]byte("rollup")), Size: 6}})
			if err == nil {
				err = e.mem.Put(context.Background(), k, data)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if g := e.current().AcceptedAt(other); (g != 0) != (i >= 9) {
			t.Fatalf("after commit %d the other proposal is accepted at %d", i, g)
		}
		if n := len(e.current().Rollups); n != 0 != (i >= 9) {
			t.Fatalf("after commit %d current lists %d rollups", i, n)
		}
		switch {
		case i == 9 && r.Streak != (Streak{}):
			t.Fatalf("commit 9, in a group of two, left streak %+v", r.Streak)
		case i == 10 && r.Streak != (Streak{Generation: r.Generation}):
			t.Fatalf("commit 10, alone after a LIST, left streak %+v", r.Streak)
		}
		prev = r.Streak
	}
}

// listRecorder records the keys each LIST of proposals returned.
type listRecorder struct {
	*memstore.Mem
	listed [][]string
}

func (s *listRecorder) ListAfter(ctx context.Context, prefix, after string) ([]remote.ObjectInfo, error) {
	objs, err := s.Mem.ListAfter(ctx, prefix, after)
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	s.listed = append(s.listed, keys)
	return objs, err
}

// Accepted proposals stay in the store (their packs hold their
// generations' objects), so a LIST of all proposals would grow with the
// history; a commit lists only the window's versions.
func TestListingStaysInTheWindow(t *testing.T) {
	var rec *listRecorder
	e := newEnv(t, func(m *memstore.Mem) remote.Store { rec = &listRecorder{Mem: m}; return rec })
	const n = DefaultK + 10
	for i := range n {
		e.commit(map[string]*string{"log.md": str(fmt.Sprintf("line %d\n", i))})
	}
	all, err := e.mem.List(context.Background(), remote.ProposalsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < n {
		t.Fatalf("%d proposals in the store after %d commits, want them all kept", len(all), n)
	}
	last := rec.listed[len(rec.listed)-1]
	if len(last) == 0 || len(last) > DefaultK {
		t.Fatalf("the last commit listed %d keys, want its own version and at most the window's %d", len(last), DefaultK)
	}
	c := uint64(n - 1) // the state the last commit was built on
	for _, k := range last {
		if _, g, _, _, _ := remote.ParseProposalEntry(k); c-g >= DefaultK {
			t.Fatalf("the last commit listed %s, built %d generations before its state (window %d)", k, c-g, DefaultK)
		}
	}
}

// A call resumed whose earlier process died after its pending record and
// before its registration landed has no version in the store: it
// registers one and is accepted once, instead of waiting for a version
// that will never be listed (found by the chaos campaign at format 4:
// LIST and GET of current in a loop, about 70 a second).
func TestResumeRegistersACallThatNeverRegistered(t *testing.T) {
	var rec *listRecorder
	e := newEnv(t, func(m *memstore.Mem) remote.Store { rec = &listRecorder{Mem: m}; return rec })
	ctx := context.Background()
	e.commit(map[string]*string{"a": str("1\n")})
	id := e.id() // the earlier process chose it, recorded it, and died
	before := len(rec.listed)
	r, err := e.pub.Resume(ctx, id, 1, change(allPacks(e.mem), id, map[string]*string{"b": str("resumed\n")}))
	if err != nil {
		t.Fatal(err)
	}
	m := e.current()
	if m.AcceptedAt(id) != r.Generation || r.Generation != 2 {
		t.Fatalf("resumed call: generation %d, current names it at %d, want 2", r.Generation, m.AcceptedAt(id))
	}
	// One LIST finds no version of ours; after registering, a LIST and
	// the gather's second one.
	if lists := len(rec.listed) - before; lists > 3 {
		t.Fatalf("the resumed call LISTed proposals %d times, want at most 3", lists)
	}
	if got := e.files(m.Head)["b"]; got != "resumed\n" {
		t.Fatalf("b = %q, want the resumed change", got)
	}
}
