package server

import (
	"context"
	"reflect"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

func TestStatus(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	ctx := context.Background()

	st, err := a.e.Status(ctx, "")
	if err != nil || st.BaseGeneration != 0 || st.Generation != 0 || len(st.Added)+len(st.Modified)+len(st.Deleted) != 0 {
		t.Fatalf("status of a fresh directory: %+v %v", st, err)
	}
	// Never pulled: every file is added.
	b.write("pre.md", "p\n")
	if st, err := b.e.Status(ctx, ""); err != nil || !reflect.DeepEqual(st.Added, []string{"pre.md"}) {
		t.Fatalf("status before the first pull: %+v %v", st, err)
	}
	b.remove("pre.md")
	a.pull()
	a.write("keep.md", "k\n")
	a.write("mod.md", "m\n")
	a.write("del.md", "d\n")
	a.commit("seed")
	a.write("mod.md", "m2\n")
	a.remove("del.md")
	a.write("new/add.md", "a\n")
	b.pull()
	b.write("other.md", "o\n")
	b.commit("remote moves")

	puts := store.Calls(memstore.OpPut)
	st, err = a.e.Status(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := &Status{Path: a.dir, BaseGeneration: 1, Generation: 2, Added: []string{"new/add.md"}, Modified: []string{"mod.md"}, Deleted: []string{"del.md"}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("status\n got  %+v\n want %+v", st, want)
	}
	if store.Calls(memstore.OpPut) != puts || a.read("mod.md") != "m2\n" {
		t.Fatal("status published or touched files")
	}
}

func TestLog(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("a.md", "1\n")
	a.commit("first")
	a.write("a.md", "1\n2\n")
	a.write("b.md", "b\n")
	a.commit("second")
	a.remove("b.md")
	a.commit("third")

	// Read from another directory's engine: the cache is filled on demand.
	entries, err := newAgent(t, store).e.Log(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("%d entries", len(entries))
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Message)
		if e.Time.IsZero() {
			t.Fatal("entry without time")
		}
	}
	if !reflect.DeepEqual(got, []string{"third", "second", "first"}) || entries[0].Generation != 3 || entries[2].Generation != 1 {
		t.Fatalf("log %v", entries)
	}
	equalMaps(t, "second's files", changeStats(entries[1].Files), map[string][2]int{"a.md": {1, 0}, "b.md": {1, 0}})
	equalMaps(t, "third's files", changeStats(entries[0].Files), map[string][2]int{"b.md": {0, 1}})
	if two, _ := a.e.Log(context.Background(), 2); len(two) != 2 {
		t.Fatalf("limit: %d entries", len(two))
	}
}

// Two engines with one private root (two processes of one user) share the
// object cache and take turns on one directory through the lock file.
func TestSharedPrivateRoot(t *testing.T) {
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, store)
	e2, err := New(Config{Store: store, PrivateRoot: a.e.private, WorkspaceRoot: a.ws, DefaultDir: a.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	a.pull()
	a.write("x.md", "x\n")
	a.commit("from a")

	lock, err := pstate.Dir{Path: a.e.stateDir(a.dir)}.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pstate.TryLock(a.e.stateDir(a.dir) + "/lock"); err != pstate.ErrLocked {
		t.Fatalf("second lock holder: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e2.Pull(ctx, ""); err == nil {
		t.Fatal("a pull went through while another process held the directory")
	}
	lock.Release()

	a.write("x.md", "x\ny\n")
	if _, err := e2.Commit(context.Background(), "", "from the second process"); err != nil {
		t.Fatal(err)
	}
	if res := a.pull(); res.Generation != 2 || a.read("x.md") != "x\ny\n" {
		t.Fatalf("after the second process: %+v", res)
	}
}
