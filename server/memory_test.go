package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
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
	if a.e.env.Memories.Of(a.e.stateDir(a.dir)).Stats == nil {
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
	m := a.e.env.Memories.Of(a.e.stateDir(a.dir))
	kept := m.StatsAt
	if _, err := other.Status(ctx, ""); err != nil {
		t.Fatal(err)
	}
	a.write("x/one.md", "one, edited again\n")
	if _, err := other.Status(ctx, ""); err != nil { // rewrites P's stat cache
		t.Fatal(err)
	}
	if dirstate.StatsIdentityOf(filepath.Join(a.e.stateDir(a.dir), "statcache")) == kept {
		t.Skip("the stat cache was not rewritten within the file system's time granularity")
	}
	if r := a.commit("a again"); r.Generation != 4 || len(r.Files) != 1 || r.Files[0].Path != "x/one.md" {
		t.Fatalf("a after the cache was replaced: %+v", r)
	}
}

// A long-lived engine reuses the baseline it last wrote only while P's
// file is that one: a baseline corrupted in place (same size, mtime put
// back) or removed is noticed on the next call, as a fresh process would.
func TestLongLivedEngineRereadsAChangedBaseline(t *testing.T) {
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, store, func(c *Config) { c.LongLived = true })
	a.pull()
	a.write("one.md", "one\n")
	a.commit("seed")
	mem := a.e.env.Memories.Of(a.e.stateDir(a.dir))
	if mem.Base == nil {
		t.Fatal("the long-lived engine kept no baseline")
	}
	a.write("one.md", "one\ntwo\n")
	if r := a.commit("edit"); r.Generation != 2 {
		t.Fatalf("edit: %+v", r)
	}
	if mem.Base == nil || mem.Base.Generation() != 2 {
		t.Fatal("the kept baseline is not the one just recorded")
	}

	// Corrupted in place: same inode and size, mtime put back.
	name := filepath.Join(a.e.stateDir(a.dir), "baseline")
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(name)
	for i := len(data) - 8; i < len(data); i++ {
		data[i] ^= 0xff
	}
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(name, fi.ModTime(), fi.ModTime())
	_, err = a.e.Commit(context.Background(), "", "after corruption")
	domainErr(t, err, diag.CodeEngineFailed, diag.ReasonBaselineLost)

	// Removed: noticed too. A commit is refused; a pull adopts the
	// directory as one without a record, keeping the local edit beside
	// the notebook's text (with the stale kept baseline it would have
	// passed as an ordinary local edit).
	a.write("one.md", "one\ntwo\nlocal\n")
	os.Remove(name)
	_, err = a.e.Commit(context.Background(), "", "after removal")
	domainErr(t, err, diag.CodeEngineFailed, diag.ReasonBaselineLost)
	_, err = a.e.Pull(context.Background(), "")
	de := domainErr(t, err, diag.CodeContentConflict, diag.ReasonMergeConflict)
	if len(de.Files) != 1 || de.Files[0].Reason != diag.FileNoRecord {
		t.Fatalf("pull without a baseline: %+v", de.Files)
	}
}

// A long-lived engine learns A's files at the paths it ignores once per
// baseline and carries them to the next baseline it records: across its
// own commits, and after others changed the ignored file, the accepted
// file there stays in the notebook as accepted (never published as
// deleted), and a fresh engine's view agrees.
func TestLongLivedEngineKeepsAcceptedFilesAtIgnoredPaths(t *testing.T) {
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other := newAgent(t, store, withIgnore(nil, true))
	other.pull()
	other.write("img.png", "accepted v1\n")
	other.write("keep.md", "k\n")
	other.commit("with a png")

	a := newAgent(t, store, withIgnore([]string{"*.png"}, false), func(c *Config) { c.LongLived = true })
	a.pull()
	for i := range 3 {
		a.appendTo("keep.md", "more\n")
		a.commit("edit beside it")
		kept := a.e.env.Memories.Of(a.e.stateDir(a.dir)).Base
		if kept == nil {
			t.Fatalf("commit %d: no kept baseline", i)
		}
		if ignored, known := kept.Ignored(); !known || len(ignored) != 1 || ignored[0].Path != "img.png" {
			t.Fatalf("commit %d: the kept baseline's ignored set is not img.png: %+v (known: %v)", i, ignored, known)
		}
	}
	other.pull()
	equalMaps(t, "notebook", other.files(), map[string]string{"img.png": "accepted v1\n", "keep.md": "k\nmore\nmore\nmore\n"})

	other.write("img.png", "accepted v2\n")
	other.commit("update png")
	a.appendTo("keep.md", "after\n")
	a.commit("merged with the update")
	a.appendTo("keep.md", "again\n")
	a.commit("on top")
	other.pull()
	equalMaps(t, "notebook", other.files(), map[string]string{"img.png": "accepted v2\n", "keep.md": "k\nmore\nmore\nmore\nafter\nagain\n"})
	if _, err := os.Lstat(a.path("img.png")); !os.IsNotExist(err) {
		t.Fatalf("the accepted file at an ignored path was written into L: %v", err)
	}
}

// A long-lived engine finds L's delta from A over the paths its scan
// touched when the last call left L exactly at A (server/dircall's memory.go, dirstate.DeltaRef),
// and over every path as soon as another process changed the baseline
// or the stat cache; each delta is checked against the whole one in
// tests (verifyRefDelta), so a wrong shortcut fails here.
func TestLongLivedEngineDeltaFromTheLastCall(t *testing.T) {
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	a := newAgent(t, store, func(c *Config) { c.LongLived = true; cfg = *c })
	a.pull()
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"x/one.md", "two.md", "x/y/three.md"} {
		a.write(p, p+"\n")
		os.Chtimes(a.path(p), old, old)
	}
	a.commit("seed")
	used := func(what string, want bool) {
		t.Helper()
		before := dircall.RefDeltas.Load()
		if r := a.commit(what); r == nil {
			t.Fatal("no result")
		}
		if got := dircall.RefDeltas.Load() > before; got != want {
			t.Fatalf("%s: delta from the last call's tree: %v, want %v", what, got, want)
		}
	}
	a.appendTo("two.md", "more\n")
	used("an edit", true)
	a.remove("x/one.md")
	a.write("x/y/four.md", "four\n")
	used("a removal and an addition", true)
	used("nothing", true)

	// Another process commits the same directory: a's next delta is
	// computed over every path, and right.
	cfg.LongLived = false
	other, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	a.appendTo("x/y/three.md", "other's\n")
	if _, err := other.Commit(context.Background(), "", "other"); err != nil {
		t.Fatal(err)
	}
	a.appendTo("two.md", "mine\n")
	used("after the other's commit", false)
	a.appendTo("two.md", "again\n")
	used("the next edit", true)

	fresh := newAgent(t, store)
	fresh.pull()
	equalMaps(t, "notebook", fresh.files(), map[string]string{
		"two.md": "two.md\nmore\nmine\nagain\n", "x/y/three.md": "x/y/three.md\nother's\n", "x/y/four.md": "four\n"})
}
