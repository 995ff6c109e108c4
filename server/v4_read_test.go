package server

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// v4Stores are the stores the format-4 tests run on.
func v4Stores(t *testing.T) map[string]func(t *testing.T) remote.Store {
	return map[string]func(t *testing.T) remote.Store{
		"mem": func(t *testing.T) remote.Store { return memstore.New() },
		"file": func(t *testing.T) remote.Store {
			s, err := filestore.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

// TestV4ReadSide: an engine reads a store whose `current` is version 4,
// written by package publish, with a group's re-parented generations and
// history in segments: pull, log, show, diff, file at, restore, revert,
// blame and verify.
func TestV4ReadSide(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store := newStore(t)
			a := v4Layout(t, store)
			m := currentV4(t, store)
			if m.Generation != 23 || len(m.Segments) == 0 {
				t.Fatalf("layout: generation %d, %d segments", m.Generation, len(m.Segments))
			}
			if inc, _ := m.Increment(23); inc.Group != (remote.GroupRef{}) {
				t.Fatalf("generation 23 was folded alone: %+v", inc)
			}

			reader := newAgent(t, store)
			if res := reader.pull(); res.Generation != 23 {
				t.Fatalf("pull: generation %d", res.Generation)
			}
			equalMaps(t, "pulled files", reader.files(), map[string]string{"a.md": a, "b.md": "b1\nb2\n", "c.md": "c1\n"})

			log, err := reader.e.History(ctx, history.Query{Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if len(log) != 23 || log[0].Generation != 23 || log[22].Generation != 1 {
				t.Fatalf("history: %d entries", len(log))
			}
			if log[21].Message != "add b" || !reflect.DeepEqual(changeStats(log[21].Files), map[string][2]int{"b.md": {2, 0}}) {
				t.Fatalf("generation 2 (re-parented into the group): %+v", log[21])
			}
			if log[20].Message != "add c" || !reflect.DeepEqual(changeStats(log[20].Files), map[string][2]int{"c.md": {1, 0}}) {
				t.Fatalf("generation 3 (re-parented into the group): %+v", log[20])
			}
			short, err := reader.e.Log(ctx, 5)
			if err != nil || len(short) != 5 || short[0].Generation != 23 {
				t.Fatalf("log: %+v %v", short, err)
			}

			show, err := reader.e.Show(ctx, 2, "")
			if err != nil || show.Message != "add b" || len(show.Files) != 1 || string(show.Files[0].New) != "b1\nb2\n" {
				t.Fatalf("show 2: %+v %v", show, err)
			}
			// Generation 5 is in a segment by now.
			show, err = reader.e.Show(ctx, 5, "")
			if err != nil || show.Message != "append 2" || !reflect.DeepEqual(changeStats(show.Files), map[string][2]int{"a.md": {1, 0}}) {
				t.Fatalf("show 5: %+v %v", show, err)
			}
			if c, err := reader.e.FileAt(ctx, 3, "a.md"); err != nil || string(c) != "l0\n" {
				t.Fatalf("a.md at 3: %q %v", c, err)
			}
			d, err := reader.e.Diff(ctx, 1, 3, "")
			if err != nil || !reflect.DeepEqual(changeStats(d), map[string][2]int{"b.md": {2, 0}, "c.md": {1, 0}}) {
				t.Fatalf("diff 1..3: %v %v", changeStats(d), err)
			}

			b, err := reader.e.Blame(ctx, history.BlameQuery{Path: "a.md"})
			if err != nil || len(b.Lines) != 21 {
				t.Fatalf("blame: %+v %v", b, err)
			}
			for i, l := range b.Lines {
				want := uint64(1)
				if i > 0 {
					want = uint64(3 + i)
				}
				if l.Generation != want {
					t.Fatalf("blame line %d: generation %d, want %d", i+1, l.Generation, want)
				}
			}

			if _, err := reader.e.Revert(ctx, "", 2, HistoryWrite{}); err != nil {
				t.Fatalf("revert 2: %v", err)
			}
			if _, ok := reader.files()["b.md"]; ok {
				t.Fatal("revert of generation 2 left b.md")
			}
			if _, err := reader.e.Restore(ctx, "", 1, []string{"a.md"}, HistoryWrite{}); err != nil {
				t.Fatalf("restore a.md at 1: %v", err)
			}
			if got := reader.read("a.md"); got != "l0\n" {
				t.Fatalf("a.md restored: %q", got)
			}

			rep, err := remote.Verify(ctx, store, remote.VerifyOptions{})
			if err != nil || !rep.OK() || rep.Generation != 23 {
				t.Fatalf("verify: %+v %v", rep, err)
			}
		})
	}
}

// v4Layout lays out a version-4 store: a group of three folded in one
// write (two re-parented onto the first, their objects in the group
// pack), then 20 one-at-a-time commits appending to a.md, so the oldest
// generations are in segments. It returns a.md's final content.
func v4Layout(t *testing.T, store remote.Store) string {
	t.Helper()
	w := newV4Writer(t, store)
	ids := orderedIDs(3)
	w.register(ids[1], "add b", map[string]string{"b.md": "b1\nb2\n"})
	w.register(ids[2], "add c", map[string]string{"c.md": "c1\n"})
	if g := w.commitID(ids[0], "seed", map[string]string{"a.md": "l0\n"}); g != 1 {
		t.Fatalf("the folder's own generation: %d", g)
	}
	m := currentV4(t, store)
	if m.Generation != 3 || m.Increments[1].Group == (remote.GroupRef{}) {
		t.Fatalf("the group: %+v", m)
	}
	a := "l0\n"
	for i := 1; i <= 20; i++ {
		a += fmt.Sprintf("l%d\n", i)
		if g := w.commit(fmt.Sprintf("append %d", i), map[string]string{"a.md": a}); g != uint64(3+i) {
			t.Fatalf("commit %d accepted at %d", i, g)
		}
	}
	if !strings.HasSuffix(a, "l20\n") {
		t.Fatal(a)
	}
	return a
}

// A host that never saw a version-4 store refuses it when its `current`
// was deleted while the proposals built on its generations stay: a v4
// store has no increment packs to tell, its proposals tell instead.
func TestV4AbsentCurrentWithProposalsIsRefused(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	w := newV4Writer(t, store)
	for i := range 3 {
		w.commit("c", map[string]string{fmt.Sprintf("f%d.md", i): "x\n"})
	}
	if err := store.Delete(ctx, remote.CurrentKey); err != nil {
		t.Fatal(err)
	}
	fresh := newAgent(t, store)
	_, err := fresh.e.Pull(ctx, "")
	domainErr(t, err, diag.CodeStorageIntegrity, diag.ReasonGenerationBack)
}
