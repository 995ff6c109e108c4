package server

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

func withIgnore(patterns []string, noDefaults bool) agentOpt {
	return func(c *Config) { c.Ignore, c.NoDefaultIgnores = patterns, noDefaults }
}

// reopen replaces a's engine by one with opts on the same workspace and
// private root (a restart with other settings).
func (a *agent) reopen(store remote.Store, opts ...agentOpt) {
	a.t.Helper()
	cfg := Config{Store: store, PrivateRoot: a.e.private, WorkspaceRoot: a.ws, DefaultDir: a.dir}
	for _, o := range opts {
		o(&cfg)
	}
	a.e.Close()
	e, err := New(cfg)
	if err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() { e.Close() })
	a.e = e
}

// Droppings (binary or not) never reach the notebook, and the real edit
// beside them commits.
func TestDroppingsAreNotPublished(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("notes.md", "real edit\n")
	a.write(".DS_Store", "\x00\x00\x00\x01Bud1")
	a.write(".notes.md.swp", "b0VIM 9.0\x00\x00")
	a.write("notes.md~", "old backup\n")
	a.write("sub/#notes.md#", "autosave\n")
	a.write("cache/x.bin", "\x00binary")
	a.reopen(store, withIgnore([]string{"cache/"}, false))
	res := a.commit("edit")
	equalMaps(t, "published", stats(res.Files), map[string][2]int{"notes.md": {1, 0}})
	b.pull()
	equalMaps(t, "second client", b.files(), map[string]string{"notes.md": "real edit\n"})
	st, err := a.e.Status(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".DS_Store", ".notes.md.swp", "cache/", "notes.md~", "sub/#notes.md#"}
	if !reflect.DeepEqual(st.Ignored, want) || len(st.Added)+len(st.Modified)+len(st.Deleted) != 0 {
		t.Fatalf("status %+v, want ignored %v", st, want)
	}
}

// The accepted notebook holds a file at a path L ignores (published by a
// client without the rule): L's own file there is never read, published,
// overwritten or deleted, the accepted file is never written into L, and
// it stays in the notebook as accepted, updates and deletion by others
// included.
func TestAcceptedFileAtIgnoredPath(t *testing.T) {
	store := memstore.New()
	other := newAgent(t, store, withIgnore(nil, true))
	other.pull()
	other.write("img.png", "accepted v1\n")
	other.write("keep.md", "k\n")
	other.commit("with a png")

	a := newAgent(t, store, withIgnore([]string{"*.png"}, false))
	a.write("img.png", "mine\n")
	a.pull()
	if got := a.read("img.png"); got != "mine\n" {
		t.Fatalf("pull overwrote an ignored file: %q", got)
	}
	a.write("keep.md", "k\nmore\n")
	a.commit("edit beside it")

	other.pull()
	equalMaps(t, "notebook", other.files(), map[string]string{"img.png": "accepted v1\n", "keep.md": "k\nmore\n"})
	other.write("img.png", "accepted v2\n")
	other.commit("update png")
	a.pull()
	if got := a.read("img.png"); got != "mine\n" {
		t.Fatalf("an update overwrote an ignored file: %q", got)
	}
	other.remove("img.png")
	other.commit("remove png")
	a.pull()
	if got := a.read("img.png"); got != "mine\n" {
		t.Fatalf("a deletion removed an ignored file: %q", got)
	}

	// Without a local file there, the accepted file is not written into L.
	c := newAgent(t, store, withIgnore([]string{"*.png"}, false))
	other.write("img.png", "accepted v3\n")
	other.commit("png again")
	c.pull()
	if _, err := os.Lstat(c.path("img.png")); !os.IsNotExist(err) {
		t.Fatalf("the accepted file at an ignored path was written into L: %v", err)
	}
	c.write("keep.md", "k\nmore\nc\n")
	c.commit("c edits")
	other.pull()
	if got := other.read("img.png"); got != "accepted v3\n" {
		t.Fatalf("a commit by a client ignoring the path changed it: %q", got)
	}
}

// A rule added after files were published freezes them for this client:
// not deleted from the notebook, local edits there not published. When
// the rule is removed again, a file this client never received is
// restored by the next pull, not published as a deletion.
func TestIgnoreRuleChanges(t *testing.T) {
	store := memstore.New()
	other := newAgent(t, store)
	a := newAgent(t, store)
	a.pull()
	a.write("scratch/a.md", "a1\n")
	a.write("notes.md", "n\n")
	a.commit("publish scratch")

	a.reopen(store, withIgnore([]string{"scratch/"}, false))
	a.write("scratch/a.md", "a2 local only\n")
	a.write("notes.md", "n\nn2\n")
	res := a.commit("notes only")
	equalMaps(t, "published", stats(res.Files), map[string][2]int{"notes.md": {1, 0}})
	other.pull()
	equalMaps(t, "notebook", other.files(), map[string]string{"scratch/a.md": "a1\n", "notes.md": "n\nn2\n"})

	// A client that never received scratch/ (its rule was there first).
	c := newAgent(t, store, withIgnore([]string{"scratch/"}, false))
	c.pull()
	if _, ok := c.files()["scratch/a.md"]; ok {
		t.Fatal("an ignored accepted file was written")
	}
	other.write("scratch/b.md", "b\n")
	other.commit("another scratch file")
	c.pull()
	c.reopen(store) // the rule is removed
	st, err := c.e.Status(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Deleted) != 0 {
		t.Fatalf("files never received count as deleted: %+v", st)
	}
	res = c.pull()
	equalMaps(t, "restored", stats(res.Files), map[string][2]int{"scratch/a.md": {1, 0}, "scratch/b.md": {1, 0}})
	c.write("notes.md", "n\nn2\nc\n")
	c.commit("after the rule went")
	other.pull()
	equalMaps(t, "notebook", other.files(), map[string]string{"scratch/a.md": "a1\n", "scratch/b.md": "b\n", "notes.md": "n\nn2\nc\n"})

	// a had a local copy of scratch/a.md while ignoring it: without the
	// rule, nothing tells which version that copy was made from, so it is
	// kept beside the accepted text (docs/local-state.md L5), never
	// published over it; once the caller keeps it, it is published.
	a.reopen(store)
	_, err = a.e.Pull(context.Background(), "")
	de := domainErr(t, err, diag.CodeContentConflict, diag.ReasonMergeConflict)
	if len(de.Files) != 1 || de.Files[0].Path != "scratch/a.md" || de.Files[0].Reason != diag.FileNoRecord {
		t.Fatalf("pull after the rule went: %+v", de.Files)
	}
	if got := a.read("scratch/a.md"); got != "<<<<<<< local\na2 local only\n=======\na1\n>>>>>>> remote\n" {
		t.Fatalf("the local copy and the accepted file: %q", got)
	}
	a.write("scratch/a.md", "a2 local only\n")
	a.commit("publish the local copy")
	other.pull()
	if got := other.read("scratch/a.md"); got != "a2 local only\n" {
		t.Fatalf("got %q", got)
	}
}

// A user's file named like a rewrite's temporary file is ordinary content
// when no rewrite was interrupted: published, never hidden or deleted.
func TestUserFileNamedLikeATemp(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	name := workdir.TempPrefix + "0123456789abcdef.tmp"
	a.write(name, "mine\n")
	a.write("odd/"+workdir.TempPrefix+"zzzzzzzzzzzzzzzz.tmp", "also mine\n")
	a.commit("temp-like names")
	a.pull()
	if got := a.read(name); got != "mine\n" {
		t.Fatalf("the user's file was removed: %q", got)
	}
	b.pull()
	equalMaps(t, "notebook", b.files(), map[string]string{name: "mine\n", "odd/" + workdir.TempPrefix + "zzzzzzzzzzzzzzzz.tmp": "also mine\n"})
}
