package server

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// A writer 300 generations behind on a version-4 store catches up
// through the rollups `current` lists (docs/storage.md §3C.8): the
// committer of each generation that ends a block builds and registers its
// rollup, the folds that LIST copy the descriptors, and the reader GETs
// the plan's rollups and the few generations no listed rollup holds, not
// every generation's proposal. Every generation still reads as written.
func TestV4CatchUpThroughRollups(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("n.md", "")
	content := []string{""}
	commit := func() {
		g := len(content)
		a.appendTo("n.md", fmt.Sprintf("line %d\n", g))
		if g%7 == 0 {
			a.write(fmt.Sprintf("d%d/f.md", g%5), fmt.Sprintf("file at %d\n", g))
		}
		if res := a.commit(fmt.Sprintf("c%d", g)); res.Generation != uint64(g) {
			t.Fatalf("commit %d: generation %d", g, res.Generation)
		}
		// The rollups of the blocks it ended are registered before the
		// next commit: what the folds copy does not depend on timing.
		a.e.publishing.Background.Wait()
		content = append(content, content[g-1]+fmt.Sprintf("line %d\n", g))
	}
	for range 100 {
		commit()
	}
	b := newAgent(t, store)
	b.pull()
	for range 300 {
		commit()
	}
	m := currentV4(t, store)
	// The climb from generation 0, (4,8], (8,16] … (128,256], stays
	// listed beside the newest block of each level: it stands in for the
	// first blocks, which are never built.
	for l := 2; l <= 7; l++ {
		if !slices.ContainsFunc(m.Rollups, func(r remote.RollupRef) bool { return r.Level == l && r.First == 1<<l+1 }) {
			t.Fatalf("current does not list the block %d..%d: %+v", 1<<l+1, 1<<(l+1), m.Rollups)
		}
	}
	plan := remote.PlanCatchUpV4(m, 100)
	want := 1 // GET current
	for _, step := range plan {
		if step.Rollup != nil {
			want++
		} else {
			want += int(step.Last - step.First + 1) // one proposal each (no group packs: one writer)
		}
	}
	before := store.Calls(memstore.OpGet)
	b.pull()
	gets := store.Calls(memstore.OpGet) - before
	t.Logf("300 generations behind: %d GETs, plan %+v", gets, plan)
	if bound := 2*int(math.Log2(300)) + 4; gets != want || gets > bound {
		t.Fatalf("catch-up of 300 generations: %d GETs, want %d (the plan's), at most %d", gets, want, bound)
	}
	if got := b.read("n.md"); got != content[400] {
		t.Fatalf("n.md after the catch-up: %d bytes, want %d", len(got), len(content[400]))
	}
	equalMaps(t, "reader", b.files(), a.files())
	// verify reads the listed rollups (referenced, not orphans) and finds
	// nothing wrong with the proposals' tree deltas.
	rep, err := remote.Verify(context.Background(), store, remote.VerifyOptions{})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep.Findings, err)
	}
	for _, o := range rep.Orphans {
		if strings.HasPrefix(o.Key, remote.RollupsPrefix) && slices.ContainsFunc(m.Rollups, func(r remote.RollupRef) bool { return r.Key() == o.Key }) {
			t.Fatalf("verify lists the rollup %s as an orphan", o.Key)
		}
	}
	// Every generation reads back as written (history reads fetch what
	// the rollups skipped).
	for g := 101; g <= 400; g++ {
		data, err := b.e.FileAt(context.Background(), uint64(g), "n.md")
		if err != nil || string(data) != content[g] {
			t.Fatalf("n.md at generation %d: %v, %d lines", g, err, strings.Count(string(data), "\n"))
		}
	}
}

// A version-4 store is checkpointed: the committer of every
// CheckpointPacks-th generation past the active checkpoint builds the
// checkpoint of its generation and registers it, a fold makes it the
// active one, and a fresh directory starts from it: the checkpoint and
// the generations after it, not every proposal since the first.
func TestV4CheckpointIsWhereAFreshDirectoryStarts(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) { c.CheckpointPacks = 16 })
	a.pull()
	for g := 1; g <= 40; g++ {
		a.write(fmt.Sprintf("f%d.md", g%6), fmt.Sprintf("generation %d\n", g))
		a.commit(fmt.Sprintf("c%d", g))
		a.e.publishing.Background.Wait()
	}
	m := currentV4(t, store)
	if m.Checkpoint.IsGenesis() || m.Checkpoint.Through%16 != 0 {
		t.Fatalf("active checkpoint %+v", m.Checkpoint)
	}
	t.Logf("active checkpoint through %d, %d retained", m.Checkpoint.Through, len(m.Checkpoints))
	plan := remote.PlanCatchUpV4(m, m.Checkpoint.Through)
	want := 2 // GET current, the checkpoint
	for _, step := range plan {
		if step.Rollup != nil {
			want++
		} else {
			want += int(step.Last - step.First + 1)
		}
	}
	rec := &remotetest.Recorder{Store: store}
	b := newAgent(t, rec)
	rec.Take()
	b.pull()
	// A fresh engine's first request names the store and probes it
	// (store-id, probe/): not the pull's reading of history.
	var gets []string
	for _, r := range rec.Take() {
		if strings.HasPrefix(r, "GET ") && !strings.HasPrefix(r, "GET probe/") && r != "GET store-id" {
			gets = append(gets, r)
		}
	}
	for _, r := range gets {
		if kind, g, _, _, _ := remote.ParseProposalEntry(strings.TrimPrefix(r, "GET ")); kind == remote.EntryProposal && g < m.Checkpoint.Through {
			t.Errorf("a fresh directory read a proposal below the checkpoint: %s", r)
		}
	}
	if len(gets) != want || !slices.Contains(gets, "GET "+m.Checkpoint.Pack.Key) {
		t.Fatalf("a fresh directory: %d GETs %v, want %d (current, the checkpoint through %d, plan %+v)", len(gets), gets, want, m.Checkpoint.Through, plan)
	}
	equalMaps(t, "fresh directory", b.files(), a.files())
	if rep, err := remote.Verify(context.Background(), store, remote.VerifyOptions{}); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep.Findings, err)
	}
	// Writing on from a checkpointed store works as before.
	b.write("b.md", "b\n")
	if res := b.commit("b"); res.Generation != 41 {
		t.Fatalf("commit after the checkpoint: %+v", res)
	}
}

// A reader that started from a checkpoint holds no tree from before it:
// the rollups it then applies store their trees as deltas of the trees
// at their block's start, so none may start before the checkpoint (their
// builders skip those blocks, and folds drop them). It catches up through
// blocks that start at the checkpoint and reads the head, taking a
// block's generations instead of a rollup that is gone from the store.
func TestV4CatchUpFromACheckpointThroughRollups(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) { c.CheckpointPacks = 80 })
	a.pull()
	commit := func(g int) {
		a.write("log.md", strings.Repeat("x", g)+"\n")
		a.write(fmt.Sprintf("d%d/f.md", g%3), fmt.Sprintf("generation %d\n", g))
		a.commit(fmt.Sprintf("c%d", g))
		a.e.publishing.Background.Wait()
	}
	for g := 1; g <= 90; g++ {
		commit(g)
	}
	if m := currentV4(t, store); m.Checkpoint.Through != 80 {
		t.Fatalf("active checkpoint through %d", m.Checkpoint.Through)
	}
	b := newAgent(t, store) // from the checkpoint: no tree of generation 64
	b.pull()
	for g := 91; g <= 150; g++ {
		commit(g)
	}
	m := currentV4(t, store)
	for _, r := range m.Rollups {
		if r.First <= m.Checkpoint.Through {
			t.Fatalf("current lists the block %d..%d, which starts before the checkpoint through %d", r.First, r.First+1<<r.Level-1, m.Checkpoint.Through)
		}
	}
	plan := remote.PlanCatchUpV4(m, 90)
	want := 1
	for _, step := range plan {
		if step.Rollup != nil {
			want++
		} else {
			want += int(step.Last - step.First + 1)
		}
	}
	// The plan's first rollup is gone (a cleanup after our read of
	// `current`): its GET finds nothing, and the block's generations after
	// 90 come instead.
	if plan[0].Rollup == nil {
		t.Fatalf("the plan does not start with a rollup: %+v", plan)
	}
	if err := store.Delete(context.Background(), plan[0].Rollup.Key()); err != nil {
		t.Fatal(err)
	}
	want += int(plan[0].Last - 90)
	// Those generations are below the tail: listing them reads the
	// segments that hold them, one per level (89..96 is one level-1
	// segment, inside one segment of each level above).
	for _, seg := range m.Segments {
		if seg.First <= 91 && 91 <= seg.Last {
			want += seg.Level
		}
	}
	before := store.Calls(memstore.OpGet)
	b.pull()
	if gets := store.Calls(memstore.OpGet) - before; gets != want {
		t.Fatalf("%d GETs, want %d (plan %+v)", gets, want, plan)
	}
	equalMaps(t, "reader", b.files(), a.files())
}

// frozenStore is a writer's view of the store that reads an old
// `current` and cannot LIST: a writer that read generation G, registered
// its proposal on G, and died before it could fold.
type frozenStore struct {
	*memstore.Mem
	current []byte
	etag    string
}

func (s *frozenStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	if key == remote.CurrentKey && s.current != nil {
		return s.current, s.etag, nil
	}
	return s.Mem.Get(ctx, key)
}

func (s *frozenStore) ListAfter(context.Context, string, string) ([]remote.ObjectInfo, error) {
	return nil, fmt.Errorf("the writer died: %w", remote.ErrUnavailable)
}

func (s *frozenStore) List(context.Context, string) ([]remote.ObjectInfo, error) {
	return nil, fmt.Errorf("the writer died: %w", remote.ErrUnavailable)
}

// A fold reads the tree of the generation each proposal was built on. A
// cache that caught up through rollups skipped those trees; on the miss
// the fold fetches the packs of the window's generations (K = 128), not
// every generation since the checkpoint, and folds the proposal instead
// of declining it. Here a writer that read generation 250 registered its
// proposal on it and died; the writer folding it 50 generations later
// had caught up from 100 through rollups.
func TestV4FoldAfterACatchUpThroughRollups(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	commit := func(from, to int) {
		for g := from; g <= to; g++ {
			a.write("log.md", fmt.Sprintf("generation %d\n", g))
			a.commit(fmt.Sprintf("c%d", g))
			a.e.publishing.Background.Wait()
		}
	}
	commit(1, 100)
	var now time.Time // the publication clock of b: waits end at once
	clock := func(c *Config) {
		c.Now = func() time.Time { return now }
		c.Sleep = func(ctx context.Context, d time.Duration) error { now = now.Add(d); return ctx.Err() }
	}
	now = time.Now()
	rec := &remotetest.Recorder{Store: store}
	b := newAgent(t, rec, clock)
	b.pull()
	commit(101, 250)
	fs := &frozenStore{Mem: store}
	c := newAgent(t, fs)
	c.pull()
	var err error
	if fs.current, fs.etag, err = store.Get(context.Background(), remote.CurrentKey); err != nil {
		t.Fatal(err)
	}
	commit(251, 300)
	c.write("c.md", "c\n")
	if _, err := c.e.Commit(context.Background(), "", "c"); err == nil {
		t.Fatal("the frozen writer's commit was accepted")
	}
	objs, err := store.List(context.Background(), remote.ProposalKey(250, ""))
	if err != nil {
		t.Fatal(err)
	}
	var cid string // the one proposal on 250 that generation 251 did not accept
	for _, o := range objs {
		if _, _, id, _, _ := remote.ParseProposalEntry(o.Key); currentV4(t, store).AcceptedAt(id) == 0 {
			cid = id
		}
	}
	if cid == "" {
		t.Fatalf("no pending proposal on 250: %v", objs)
	}
	b.write("b.md", "b\n")
	rec.Take()
	res := b.commit("b")
	// The GETs of packs: the proposals and rollups the catch-up and the
	// fold's refill fetched (b also polls `current` while it waits for
	// the dead writer's fold, then takes it over).
	gets := 0
	for _, r := range rec.Take() {
		if strings.HasPrefix(r, "GET ") && r != "GET "+remote.CurrentKey {
			gets++
		}
	}
	m := currentV4(t, store)
	if g := m.AcceptedAt(cid); g == 0 || m.IsDeclined(250, cid) {
		t.Fatalf("the proposal on 250 was not folded (accepted at %d, declined %v)", g, m.IsDeclined(250, cid))
	}
	t.Logf("b's commit at %d (the fold of 2): %d GETs besides current", res.Generation, gets)
	// The whole chain would be nearly 300 packs; the window is 128.
	if gets > 128+40 {
		t.Fatalf("b's commit made %d GETs: it fetched more than the window's generations", gets)
	}
	b.pull()
	equalMaps(t, "b", b.files(), map[string]string{"log.md": "generation 300\n", "b.md": "b\n", "c.md": "c\n"})
}

// The rollups a commit builds are kept in its object cache, so no process
// on this host downloads them, and those of one generation (the largest
// block it ends, and a smaller one where a due checkpoint may need it:
// remote.RollupLevelsBuiltV4) go into one file: such a commit adds two
// files to the cache, its own proposal and its rollups. A checkpoint
// every 12 generations makes some generations build two: at 16, before
// the checkpoint of 12 is active, (8,16] and the block the climb from 12
// takes, (12,16].
func TestV4RollupsOfAGenerationKeptInOneFile(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) { c.CheckpointPacks = 12 })
	a.pull()
	chain := func() string {
		ents, _ := os.ReadDir(a.e.env.Caches.Dir())
		for _, e := range ents {
			if e.Name() != "empty" {
				return filepath.Join(a.e.env.Caches.Dir(), e.Name())
			}
		}
		return ""
	}
	files := func() map[string]bool {
		ents, _ := os.ReadDir(chain())
		out := map[string]bool{}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				out[e.Name()] = true
			}
		}
		return out
	}
	rollups := func() map[string]bool {
		r, err := store.List(context.Background(), remote.RollupsPrefix)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, o := range r {
			out[o.Key] = true
		}
		return out
	}
	for g := 1; g <= 64; g++ {
		before, had := files(), rollups()
		a.write(fmt.Sprintf("f%d.md", g), fmt.Sprintf("new %d\n", g)) // blocks of different lengths hold different files
		a.commit(fmt.Sprintf("c%d", g))
		a.e.publishing.Background.Wait()
		var built []string
		for key := range rollups() {
			if !had[key] {
				built = append(built, key)
			}
		}
		if len(built) < 2 {
			continue
		}
		var added []string
		for name := range files() {
			if !before[name] {
				added = append(added, name)
			}
		}
		if len(added) != 2 {
			t.Fatalf("generation %d built %d rollups and added %d files to the cache, want 2 (its proposal, its rollups): %v", g, len(built), len(added), added)
		}
		c, err := a.e.env.Caches.Open(filepath.Base(chain()))
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range built {
			if !c.Store().HasPack(pstate.HashKey(key) + ".pack") {
				t.Errorf("the rollup %s is not in the cache", key)
			}
		}
		return
	}
	t.Fatal("no generation built two rollups")
}
