package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

// A long-lived engine and another engine on the same directory and
// private root (a CLI process): whatever one does, the other's next call
// sees, and the long-lived one reuses its memory only while it holds.
func TestLongLivedEngineSharesItsDirectory(t *testing.T) {
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	a := newAgent(t, store, func(c *Config) { c.LongLived = true; cfg = *c })
	a.pull()
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"x/one.md", "two.md"} {
		a.write(p, p+"\n")
		os.Chtimes(a.path(p), old, old)
	}
	a.commit("seed")
	if a.e.memories[a.e.stateDir(a.dir)].stats == nil {
		t.Fatal("the long-lived engine kept no stat cache")
	}
	cfg.LongLived = false
	other, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()

	// The other process commits an edit: nothing left for a to publish.
	a.write("x/one.md", "one, by the other process\n")
	if r, err := other.Commit(ctx, "", "other"); err != nil || r.Generation != 2 {
		t.Fatalf("other commit: %v %+v", err, r)
	}
	if r := a.commit("nothing"); r.Generation != 2 || len(r.Files) != 0 {
		t.Fatalf("after the other's commit: %+v", r)
	}
	// a's edit that keeps size and mtime is published on top.
	fi, _ := os.Stat(a.path("two.md"))
	a.write("two.md", "TWO.md\n")
	os.Chtimes(a.path("two.md"), fi.ModTime(), fi.ModTime())
	if r := a.commit("a's edit"); r.Generation != 3 || len(r.Files) != 1 || r.Files[0].Path != "two.md" {
		t.Fatalf("a's edit: %+v", r)
	}
	// The other process sees a's commit as its own state, not a change.
	if st, err := other.Status(ctx, ""); err != nil || len(st.Added)+len(st.Modified)+len(st.Deleted) != 0 || st.Generation != 3 {
		t.Fatalf("other status: %v %+v", err, st)
	}
	// The stat cache in P replaced (by the other process): a reads P's copy.
	m := a.e.memories[a.e.stateDir(a.dir)]
	kept := m.statsAt
	if _, err := other.Status(ctx, ""); err != nil {
		t.Fatal(err)
	}
	a.write("x/one.md", "one, edited again\n")
	if _, err := other.Status(ctx, ""); err != nil { // rewrites P's stat cache
		t.Fatal(err)
	}
	if identityOf(filepath.Join(a.e.stateDir(a.dir), "statcache")) == kept {
		t.Skip("the stat cache was not rewritten within the file system's time granularity")
	}
	if r := a.commit("a again"); r.Generation != 4 || len(r.Files) != 1 || r.Files[0].Path != "x/one.md" {
		t.Fatalf("a after the cache was replaced: %+v", r)
	}
}
