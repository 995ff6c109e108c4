package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// scriptedStore is one writer's view of a shared Mem with hooks: its
// first conditional write of `current` is refused as a lost race (not
// applied), and the hooks run before its listing of proposals and its
// later writes of `current`.
type scriptedStore struct {
	*memstore.Mem
	replaces   atomic.Int32
	onRegister func()                    // after its descriptor is stored
	beforeList func()                    // before it lists proposals
	beforeLast func(ctx context.Context) // before each later write of `current`
	mu         sync.Mutex
	gets       []string
}

func (s *scriptedStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	s.mu.Lock()
	s.gets = append(s.gets, key)
	s.mu.Unlock()
	return s.Mem.Get(ctx, key)
}

func (s *scriptedStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if key == remote.CurrentKey {
		if s.replaces.Add(1) == 1 {
			return "", fmt.Errorf("scripted lost race: %w", remote.ErrPrecondition)
		}
		if s.beforeLast != nil {
			s.beforeLast(ctx)
		}
	}
	return s.Mem.ReplaceIfMatch(ctx, key, data, etag)
}

func (s *scriptedStore) Put(ctx context.Context, key string, data []byte) error {
	err := s.Mem.Put(ctx, key, data)
	if err == nil && strings.HasPrefix(key, remote.ProposalsPrefix) && s.onRegister != nil {
		s.onRegister()
	}
	return err
}

func (s *scriptedStore) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	if strings.HasPrefix(prefix, remote.ProposalsPrefix) && s.beforeList != nil {
		s.beforeList()
	}
	return s.Mem.List(ctx, prefix)
}

// groupPair runs the schedule of two writers that both lose their first
// race on the same generation and register: leader A lists the proposals
// only once B's is registered and writes `current` first, including B if
// B merges cleanly; B's own write waits until A's commit returned. edit
// makes each writer's change to the notebook both pulled.
func groupPair(t *testing.T, seedFiles map[string]string, editA, editB func(a *agent)) (store *memstore.Mem, a, b *agent, resA, resB *Result, errB error) {
	return groupPairAfter(t, 1, seedFiles, editA, editB)
}

// lastScript is the scripted store of the last groupPair's B.
var lastScript *scriptedStore

// groupPairAfter is groupPair on a notebook of seeds generations.
func groupPairAfter(t *testing.T, seeds int, seedFiles map[string]string, editA, editB func(a *agent)) (store *memstore.Mem, a, b *agent, resA, resB *Result, errB error) {
	t.Helper()
	store = memstore.New()
	// The seeds were committed a minute ago: a tail of publications
	// milliseconds apart would make A's and B's first attempts register
	// (a busy fleet) instead of racing as this schedule scripts.
	seed := newAgent(t, store, func(c *Config) { c.Now = func() time.Time { return time.Now().Add(-time.Minute) } })
	seed.pull()
	for p, c := range seedFiles {
		seed.write(p, c)
	}
	seed.commit("seed")
	for i := 1; i < seeds; i++ {
		seed.write(fmt.Sprintf("seed-%d.md", i), "seed\n")
		seed.commit("seed")
	}
	sa := &scriptedStore{Mem: store}
	sb := &scriptedStore{Mem: store}
	lastScript = sb
	a = newAgent(t, sa, withGroupCommit())
	b = newAgent(t, sb, withGroupCommit())
	a.pull()
	b.pull()
	editA(a)
	editB(b)

	bRegistered := make(chan struct{})
	var once sync.Once
	sb.onRegister = func() { once.Do(func() { close(bRegistered) }) }
	sa.beforeList = func() { <-bRegistered }
	aDone := make(chan struct{})
	sb.beforeLast = func(ctx context.Context) {
		select {
		case <-aDone:
		case <-ctx.Done():
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		resB, errB = b.e.Commit(context.Background(), "", "commit B")
	}()
	<-bRegistered
	resA = a.commit("commit A")
	close(aDone)
	wg.Wait()
	return store, a, b, resA, resB, errB
}

func logMessages(t *testing.T, e *Engine) []string {
	t.Helper()
	entries, err := e.Log(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, en := range entries {
		out = append(out, fmt.Sprintf("%d %s", en.Generation, en.Message))
	}
	return out
}

// Two writers edit different lines of one file: the leader includes the
// other's proposal, three-way merged onto its own result, so one write of
// `current` accepts both, in order, each with its own message, ID and
// diffstat; both L directories hold the accepted tree.
func TestGroupCommitMergesSharedFile(t *testing.T) {
	seedFiles := map[string]string{"shared.md": "alpha\n\n\n\nbeta\n\n\n\ngamma\n"}
	store, a, b, resA, resB, errB := groupPair(t, seedFiles,
		func(a *agent) { a.write("shared.md", "alpha A\n\n\n\nbeta\n\n\n\ngamma\n") },
		func(b *agent) { b.write("shared.md", "alpha\n\n\n\nbeta\n\n\n\ngamma B\n") })
	if errB != nil {
		t.Fatalf("B: %v", errB)
	}
	// One write accepted both (A's increment at 2, B's at 3, as the log
	// shows): each result names the generation L now holds.
	if resA.Generation != 3 || resB.Generation != 3 {
		t.Fatalf("generations A %d, B %d; want 3 and 3", resA.Generation, resB.Generation)
	}
	writes, members := a.e.notebook.GroupStats()
	if writes != 1 || members != 1 || a.e.groupMerged.Load() != 1 {
		t.Fatalf("A's group writes %d, members %d, merged %d; want 1, 1, 1", writes, members, a.e.groupMerged.Load())
	}
	want := "alpha A\n\n\n\nbeta\n\n\n\ngamma B\n"
	for _, w := range []*agent{a, b} {
		if got := w.read("shared.md"); got != want {
			t.Fatalf("L holds %q, want the accepted %q", got, want)
		}
	}
	reader := newAgent(t, store)
	reader.pull()
	if got := reader.read("shared.md"); got != want {
		t.Fatalf("accepted tree %q, want %q", got, want)
	}
	for _, r := range []*Result{resA, resB} {
		if len(r.Files) != 1 || r.Files[0] != (FileStat{Path: "shared.md", Insertions: 1, Deletions: 1}) {
			t.Fatalf("diffstat %+v, want each writer's own +1 -1", r.Files)
		}
	}
	if got := logMessages(t, reader.e); strings.Join(got, "|") != "3 commit B|2 commit A|1 seed" {
		t.Fatalf("log %q", got)
	}
	nb := remote.Open(store, remote.Options{})
	st, err := nb.ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	incs, err := nb.Publications(context.Background(), st, 1, st.Generation())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, inc := range incs {
		if ids[inc.Publication] {
			t.Fatalf("publication %s accepted twice", inc.Publication)
		}
		ids[inc.Publication] = true
	}
	// B, accepted as A's member, read the group pack A wrote, not the
	// increment A built for it.
	groupPack := remote.GroupPackKey(1, incs[1].Publication)
	if _, _, err := store.Get(context.Background(), groupPack); err != nil {
		t.Fatalf("A's group pack: %v", err)
	}
	readGroup := false
	for _, k := range lastScript.gets {
		if k == remote.IncrementKey(3, incs[2].Publication) {
			t.Fatalf("B read its member increment %s instead of the group pack", k)
		}
		readGroup = readGroup || k == groupPack
	}
	if !readGroup {
		t.Fatalf("B never read the group pack; it read %q", lastScript.gets)
	}
	// B's member increment also holds B's own version of shared.md (no
	// tree names it): the merge base B adopts if its rewrite is cut short.
	ownID, err := cas.WriteFile(nil, []byte("alpha\n\n\n\nbeta\n\n\n\ngamma B\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := store.Get(context.Background(), remote.IncrementKey(3, incs[2].Publication))
	if err != nil {
		t.Fatal(err)
	}
	pk, err := cas.OpenPack(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pk.Get(ownID); err != nil {
		t.Fatalf("B's member pack lacks B's own version of shared.md: %v", err)
	}
	// Both go on from the accepted tree.
	b.appendTo("shared.md", "more\n")
	if r := b.commit("after"); r.Generation != 4 {
		t.Fatalf("B's next commit at generation %d", r.Generation)
	}
}

// Both writers append at the end of the file: rule 6 keeps both
// additions, the group's (the leader's) first, as B's own retry after A
// would have merged them.
func TestGroupCommitMergesConcurrentAdditions(t *testing.T) {
	seedFiles := map[string]string{"log.md": "start\n"}
	_, a, b, resA, resB, errB := groupPair(t, seedFiles,
		func(a *agent) { a.appendTo("log.md", "from A\n") },
		func(b *agent) { b.appendTo("log.md", "from B\n") })
	if errB != nil {
		t.Fatalf("B: %v", errB)
	}
	if resA.Generation != 3 || resB.Generation != 3 || a.e.groupMerged.Load() != 1 {
		t.Fatalf("generations %d, %d, merged %d", resA.Generation, resB.Generation, a.e.groupMerged.Load())
	}
	want := "start\nfrom A\nfrom B\n"
	for _, w := range []*agent{a, b} {
		if got := w.read("log.md"); got != want {
			t.Fatalf("L holds %q, want %q", got, want)
		}
	}
}

// Both writers change the same line: B's proposal does not merge cleanly,
// so A's write accepts only A; B's own retry merges and reports the
// conflict as a commit without group commit does.
func TestGroupCommitLeavesConflictToProposer(t *testing.T) {
	seedFiles := map[string]string{"shared.md": "one\ntwo\nthree\n"}
	store, a, b, resA, _, errB := groupPair(t, seedFiles,
		func(a *agent) { a.write("shared.md", "one\nTWO by A\nthree\n") },
		func(b *agent) { b.write("shared.md", "one\nTWO by B\nthree\n") })
	if resA.Generation != 2 {
		t.Fatalf("A at generation %d", resA.Generation)
	}
	if _, members := a.e.notebook.GroupStats(); members != 0 {
		t.Fatalf("A's write included %d members; the conflicting proposal must be left out", members)
	}
	var de *Error
	if !errors.As(errB, &de) || de.Code != CodeContentConflict {
		t.Fatalf("B: %v, want a CONTENT_CONFLICT report", errB)
	}
	if !strings.Contains(b.read("shared.md"), "<<<<<<<") {
		t.Fatalf("B's L has no conflict block: %q", b.read("shared.md"))
	}
	reader := newAgent(t, store)
	reader.pull()
	if got := reader.read("shared.md"); got != "one\nTWO by A\nthree\n" {
		t.Fatalf("accepted %q", got)
	}
}

// B removes the file A edits: modify/delete is no clean merge, B is left
// out and its own retry reports the conflict.
func TestGroupCommitLeavesModifyDeleteToProposer(t *testing.T) {
	seedFiles := map[string]string{"shared.md": "one\n", "other.md": "x\n"}
	_, a, _, resA, _, errB := groupPair(t, seedFiles,
		func(a *agent) { a.appendTo("shared.md", "two\n") },
		func(b *agent) { b.remove("shared.md") })
	if resA.Generation != 2 {
		t.Fatalf("A at generation %d", resA.Generation)
	}
	if _, members := a.e.notebook.GroupStats(); members != 0 {
		t.Fatalf("A's write included %d members", members)
	}
	var de *Error
	if !errors.As(errB, &de) || de.Code != CodeContentConflict {
		t.Fatalf("B: %v, want a CONTENT_CONFLICT report", errB)
	}
}

// A group's write accepts several generations; the rollups of the blocks
// those generations end are built too, not only the last one's (readers
// would fetch the halves instead).
func TestGroupCommitBuildsMembersRollups(t *testing.T) {
	// Generations 1-3 seeded; A's increment is 4 (it ends the level-2
	// block 1-4), B's is 5.
	store, a, _, resA, _, errB := groupPairAfter(t, 3, map[string]string{"a.md": "a\n", "b.md": "b\n"},
		func(a *agent) { a.appendTo("a.md", "A\n") },
		func(b *agent) { b.appendTo("b.md", "B\n") })
	if errB != nil || resA.Generation != 5 {
		t.Fatalf("A at %d, B: %v", resA.Generation, errB)
	}
	a.e.Close() // waits for the background rollups
	if _, _, err := store.Get(context.Background(), remote.RollupKey(2, 1)); err != nil {
		t.Fatalf("the rollup of generations 1-4, ended by the group's first increment: %v", err)
	}
}
