package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
)

// DESIGN §10: once the store's probe verdict is cached in P, a process
// (a fresh Engine) sends three requests for an uncontended commit (GET
// current, PUT the pack, conditional PUT of current) and one for a no-op
// commit, a no-op pull or a status.
func TestRequestsPerOperation(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	for i := range 30 {
		a.write(fmt.Sprintf("d%d/n%02d.md", i%3, i), "note\n")
	}
	a.commit("seed")

	// Each step runs in a fresh Engine on the same P, as one CLI process.
	step := func(name string, want map[memstore.Op]int, call func(e *Engine) error) {
		t.Helper()
		e, err := New(Config{Store: store, PrivateRoot: a.e.private, WorkspaceRoot: a.ws, DefaultDir: a.dir})
		if err != nil {
			t.Fatal(err)
		}
		before := callsOf(store)
		if err := call(e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		got := callsSince(store, before)
		if !maps.Equal(got, want) {
			t.Fatalf("%s: requests %v, want %v", name, got, want)
		}
	}
	ctx := context.Background()
	a.appendTo("d1/n01.md", "more\n")
	step("commit", map[memstore.Op]int{memstore.OpGet: 1, memstore.OpPut: 1, memstore.OpReplace: 1}, func(e *Engine) error {
		_, err := e.Commit(ctx, "", "append")
		return err
	})
	step("no-op commit", map[memstore.Op]int{memstore.OpGet: 1}, func(e *Engine) error {
		_, err := e.Commit(ctx, "", "nothing")
		return err
	})
	step("no-op pull", map[memstore.Op]int{memstore.OpGet: 1}, func(e *Engine) error {
		_, err := e.Pull(ctx, "")
		return err
	})
	step("status", map[memstore.Op]int{memstore.OpGet: 1}, func(e *Engine) error {
		_, err := e.Status(ctx, "")
		return err
	})
	a.appendTo("d2/n02.md", "again\n")
	step("second commit", map[memstore.Op]int{memstore.OpGet: 1, memstore.OpPut: 1, memstore.OpReplace: 1}, func(e *Engine) error {
		_, err := e.Commit(ctx, "", "append again")
		return err
	})
}

// Format 4: a writer alone commits in three requests (GET current, PUT
// its proposal, the conditional write of current), LISTing proposals
// once in publish.MaxSkips + 1 commits (the LIST-skip rule, whose memory
// is the directory's streak in P); each commit a fresh Engine on the
// same P, as one CLI process.
func TestRequestsPerCommitV4WriterAlone(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("n.md", "note\n")
	a.commit("seed")
	ctx := context.Background()
	var lists []int
	for i := range 2*publish.MaxSkips + 1 {
		a.appendTo("n.md", fmt.Sprintf("line %d\n", i))
		e, err := New(Config{Store: store, PrivateRoot: a.e.private, WorkspaceRoot: a.ws, DefaultDir: a.dir})
		if err != nil {
			t.Fatal(err)
		}
		segments, listed := segmentObjects(t, store), rollupsIn(t, store)
		before := callsOf(store)
		res, err := e.Commit(ctx, "", fmt.Sprintf("commit %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		got := callsSince(store, before)
		lists = append(lists, got[memstore.OpList])
		// A fold that LISTs copies the descriptors registered since the
		// last one (rollupsIn grows), which this host registered: it
		// reads its copies of them, not the store (server/storeview/hostobjects.go).
		if rollupsIn(t, store) < listed {
			t.Fatalf("commit %d: current lists fewer rollups than before", i)
		}
		// A commit that LISTs may LIST twice: its first LIST came less
		// than the gather after its own previous write landed. A write
		// whose tail (15 increments at most) folds into a segment PUTs
		// the segment first: one PUT more, in one commit of 16. A commit
		// whose generation ends rollup blocks builds them in the
		// background: per block its pack and its descriptor, two PUTs
		// counted apart from the publication's.
		// A block that starts below the tail needs its start's head from
		// the segment that indexes it, which this host stored: its copy
		// is read, not the store (server/storeview/hostobjects.go).
		levels := remote.RollupLevelsV4(res.Generation)
		rollups := 2 * len(levels)
		puts := 1 + segmentObjects(t, store) - segments + rollups
		want := map[memstore.Op]int{memstore.OpGet: 1, memstore.OpPut: puts, memstore.OpReplace: 1}
		if n := got[memstore.OpList]; n == 1 || n == 2 {
			want[memstore.OpList] = n
		}
		if !maps.Equal(got, want) {
			t.Fatalf("commit %d: requests %v, want %v", i, got, want)
		}
	}
	// The seed LISTed (no streak yet), then MaxSkips skip, then one LISTs.
	listed := make([]bool, len(lists))
	want := make([]bool, len(lists))
	for i := range want {
		listed[i], want[i] = lists[i] > 0, (i+1)%(publish.MaxSkips+1) == 0
	}
	if !slices.Equal(listed, want) {
		t.Fatalf("LISTs per commit %v: want a LIST exactly in commits %d and %d", lists, publish.MaxSkips, 2*publish.MaxSkips+1)
	}
}

// segmentObjects returns how many segment objects the store holds.
func segmentObjects(t *testing.T, store *memstore.Mem) int {
	t.Helper()
	objs, err := store.List(context.Background(), remote.SegmentsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return len(objs)
}

// rollupsIn returns how many rollups store's version-4 `current` lists.
func rollupsIn(t *testing.T, store *memstore.Mem) int {
	t.Helper()
	data, _, err := store.Get(context.Background(), remote.CurrentKey)
	if err != nil {
		t.Fatal(err)
	}
	m, err := remote.DecodeManifestV4(data)
	if err != nil {
		return 0 // not version 4 yet
	}
	return len(m.Rollups)
}

// countedOps are the store requests the tests above count.
var countedOps = []memstore.Op{memstore.OpGet, memstore.OpHead, memstore.OpCreate, memstore.OpReplace, memstore.OpPut, memstore.OpDelete, memstore.OpList}

// callsOf returns how many requests of each kind store has served.
func callsOf(store *memstore.Mem) map[memstore.Op]int {
	out := map[memstore.Op]int{}
	for _, op := range countedOps {
		out[op] = store.Calls(op)
	}
	return out
}

// callsSince returns the requests of each kind store served since
// before (callsOf), leaving out the kinds it served none of.
func callsSince(store *memstore.Mem, before map[memstore.Op]int) map[memstore.Op]int {
	got := map[memstore.Op]int{}
	for op, n := range callsOf(store) {
		if d := n - before[op]; d != 0 {
			got[op] = d
		}
	}
	return got
}
