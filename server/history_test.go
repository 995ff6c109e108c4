package server

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/history"
)

func changeStats(files []history.Change) map[string][2]int {
	out := map[string][2]int{}
	for _, f := range files {
		out[f.Path] = [2]int{f.Insertions, f.Deletions}
	}
	return out
}

// An agent deletes a file and rewrites another: History, Show, FileAt and
// Diff say exactly that, and restore and revert undo it as local edits.
func TestHistoryShowRestoreRevert(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	person, bot := newAgent(t, store), newAgent(t, store)
	person.pull()
	person.write("keep.md", "k1\nk2\n")
	person.write("plan.md", "one\ntwo\nthree\n")
	person.write("docs/gone.md", "g\n")
	person.commit("seed") // generation 1
	bot.pull()
	bot.remove("docs/gone.md")
	bot.write("plan.md", "rewritten\n")
	bot.commit("bad") // generation 2
	bot.write("keep.md", "k1\nk2\nk3\n")
	bot.commit("later") // generation 3

	log, err := person.e.History(ctx, history.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 3 || log[0].Generation != 3 || log[1].Message != "bad" || log[2].Generation != 1 {
		t.Fatalf("history: %+v", log)
	}
	if got := changeStats(log[1].Files); !reflect.DeepEqual(got, map[string][2]int{"docs/gone.md": {0, 1}, "plan.md": {1, 3}}) {
		t.Fatalf("bad publication's files: %v", got)
	}
	if f := log[1].Files[0]; !f.Removed || f.Old != nil {
		t.Fatalf("without Content no versions are loaded: %+v", f)
	}
	onlyDocs, err := person.e.History(ctx, history.Query{Limit: 10, Path: "docs"})
	if err != nil || len(onlyDocs) != 2 || onlyDocs[0].Generation != 2 || len(onlyDocs[0].Files) != 1 {
		t.Fatalf("history of docs/: %+v %v", onlyDocs, err)
	}

	show, err := person.e.Show(ctx, 2, "")
	if err != nil || show.Message != "bad" || string(show.Files[1].Old) != "one\ntwo\nthree\n" || string(show.Files[1].New) != "rewritten\n" {
		t.Fatalf("show 2: %+v %v", show, err)
	}
	if c, err := person.e.FileAt(ctx, 1, "docs/gone.md"); err != nil || string(c) != "g\n" {
		t.Fatalf("file at 1: %q %v", c, err)
	}
	_, err = person.e.FileAt(ctx, 2, "docs/gone.md")
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonInvalidArgument)
	d, err := person.e.Diff(ctx, 1, history.Latest, "")
	if err != nil || !reflect.DeepEqual(changeStats(d), map[string][2]int{"docs/gone.md": {0, 1}, "plan.md": {1, 3}, "keep.md": {1, 0}}) {
		t.Fatalf("diff 1..latest: %v %v", changeStats(d), err)
	}
	_, err = person.e.Show(ctx, 9, "")
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonInvalidArgument)

	// Revert needs a pulled directory that has seen the publication.
	_, err = person.e.Revert(ctx, "", 2, HistoryWrite{})
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonNotPulled)
	person.pull()
	res, err := person.e.Revert(ctx, "", 2, HistoryWrite{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"keep.md": "k1\nk2\nk3\n", "plan.md": "one\ntwo\nthree\n", "docs/gone.md": "g\n"}
	equalMaps(t, "after revert", person.files(), want)
	if res.Generation != 2 || len(res.Files) != 2 {
		t.Fatalf("revert result %+v", res)
	}
	local, err := person.e.LocalDiff(ctx, "", "")
	if err != nil || !reflect.DeepEqual(changeStats(local), map[string][2]int{"docs/gone.md": {1, 0}, "plan.md": {3, 1}}) {
		t.Fatalf("local diff after revert: %v %v", changeStats(local), err)
	}
	person.commit("revert 2")
	bot.pull()
	equalMaps(t, "bot after the revert", bot.files(), want)

	// Restore one path, then the whole notebook, at generation 2.
	if _, err := person.e.Restore(ctx, "", 2, []string{"docs"}, HistoryWrite{}); err != nil {
		t.Fatal(err)
	}
	equalMaps(t, "restore docs at 2", person.files(), map[string]string{"keep.md": "k1\nk2\nk3\n", "plan.md": "one\ntwo\nthree\n"})
	if _, err := person.e.Restore(ctx, "", 2, nil, HistoryWrite{}); err != nil {
		t.Fatal(err)
	}
	equalMaps(t, "restore all at 2", person.files(), map[string]string{"keep.md": "k1\nk2\n", "plan.md": "rewritten\n"})
	_, err = person.e.Restore(ctx, "", 2, []string{"nothing/here"}, HistoryWrite{})
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonInvalidArgument)
	_, err = person.e.Restore(ctx, "", 1, []string{"../x"}, HistoryWrite{})
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonInvalidArgument)
}

// A revert that overlaps a later edit leaves conflict blocks, as a pull
// would, with their ranges in the error.
func TestRevertConflict(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("n.md", "a\nb\nc\n")
	a.commit("seed")
	a.write("n.md", "a\nB\nc\n")
	a.commit("bad")
	a.write("n.md", "a\nB2\nc\n")
	a.commit("later")
	_, err := a.e.Revert(ctx, "", 2, HistoryWrite{})
	de := domainErr(t, err, diag.CodeContentConflict, diag.ReasonMergeConflict)
	if len(de.Files) != 1 || de.Files[0].Path != "n.md" || len(de.Files[0].Ranges) != 1 {
		t.Fatalf("conflict report %+v", de.Files)
	}
	r := de.Files[0].Ranges[0]
	want := "a\n<<<<<<< local\nB2\n=======\nb\n>>>>>>> remote\nc\n"
	if got := a.read("n.md"); got != want || r.Start != 2 || r.End != 6 {
		t.Fatalf("conflict written: %q range %+v", got, r)
	}
}

// cutV2Store returns a copy of the version-2 fixture store (82
// generations) whose history a version-3 checkpoint through its head and
// cleanup cut (the swap is generation 83): nothing before generation 82
// is retained any more, as a writer before format 4 with
// --retained-checkpoints 0 and no window by time would leave it. (A
// version-4 store's history is not cut yet.)
func cutV2Store(t *testing.T) *memstore.Mem {
	t.Helper()
	ctx := context.Background()
	store := memstore.New()
	remotetest.CopyFixture(t, filepath.Join("..", "remote", "testdata", "v2-store"), store)
	nb := remote.Open(store, remote.Options{})
	res, err := nb.Checkpoint(ctx, remote.CheckpointOptions{MinIncrements: 1})
	if err != nil || res.Checkpoint.Through != 82 {
		t.Fatalf("checkpoint of the fixture: %+v, %v", res.Checkpoint, err)
	}
	if _, err := nb.Cleanup(ctx, res.Checkpoint.Through); err != nil {
		t.Fatal(err)
	}
	return store
}

// Once checkpoints drop older chains, a generation before the retained
// history is HISTORY_UNAVAILABLE naming the oldest retained one; the
// retained publications stay readable, across the upgrade to format 4
// that the next commits make.
func TestHistoryUnavailable(t *testing.T) {
	ctx := context.Background()
	store := cutV2Store(t)
	a := newAgent(t, store)
	a.pull()
	for i := 1; i <= 2; i++ {
		a.write("n.md", fmt.Sprintf("%d\n", i))
		a.commit(fmt.Sprint("c", i))
	}
	fresh := newAgent(t, store)
	h, err := fresh.e.openHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldest := h.Retention().Oldest
	// 83 is the checkpoint's swap, which published nothing; 84 the
	// first commit, which upgraded the store.
	if oldest != 84 || h.Retention().Floor != 82 {
		t.Fatalf("oldest retained %d, floor %d: want 84 and 82", oldest, h.Retention().Floor)
	}
	// The floor is the oldest kept checkpoint's generation: its tree reads,
	// the publication made there does not (its parent's tree is gone).
	_, err = fresh.e.Show(ctx, h.Retention().Floor, "")
	de := domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonHistoryUnavailable)
	if want := fmt.Sprintf("the oldest retained generation is %d.", oldest); !strings.Contains(de.Message, want) {
		t.Fatalf("message %q does not name %d", de.Message, oldest)
	}
	_, err = fresh.e.Show(ctx, 40, "")
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonHistoryUnavailable)
	en, err := fresh.e.Show(ctx, oldest, "")
	if err != nil || len(en.Files) != 1 {
		t.Fatalf("show oldest retained %d: %+v %v", oldest, en, err)
	}
	log, err := fresh.e.History(ctx, history.Query{Limit: 100})
	if err != nil || len(log) != 2 || log[len(log)-1].Generation != oldest || log[0].Message != "c2" {
		t.Fatalf("history: %d entries, %v", len(log), err)
	}
}

// Restoring some paths only cannot put a file under a file of L.
func TestRestoreRefusesFileUnderFile(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("x/n.md", "n\n")
	a.commit("dir") // 1
	a.remove("x/n.md")
	a.remove("x")
	a.write("x", "now a file\n")
	a.commit("file") // 2
	_, err := a.e.Restore(ctx, "", 1, []string{"x/n.md"}, HistoryWrite{})
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonInvalidArgument)
	equalMaps(t, "nothing written", a.files(), map[string]string{"x": "now a file\n"})
	if _, err := a.e.Restore(ctx, "", 1, []string{"x"}, HistoryWrite{}); err != nil {
		t.Fatal(err)
	}
	equalMaps(t, "restore x", a.files(), map[string]string{"x/n.md": "n\n"})
}
