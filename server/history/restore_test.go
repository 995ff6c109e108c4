package history

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// memObjects is an object cache held in memory: one set, nothing to
// list again.
type memObjects struct{ *cas.ObjectSet }

func (memObjects) Holder(cas.ID) *cas.Store { return nil }
func (memObjects) Rescan()                  {}

// notebook writes files as the objects of a commit on parent into objs
// and returns the commit's ID and the files by ID.
func notebook(t *testing.T, objs *cas.ObjectSet, parent cas.ID, files map[string]string) (cas.ID, map[string]cas.ID) {
	t.Helper()
	ids := map[string]cas.ID{}
	for p, c := range files {
		id, err := cas.WriteFile(objs, []byte(c))
		if err != nil {
			t.Fatal(err)
		}
		ids[p] = id
	}
	tree, err := cas.WriteTree(objs, ids)
	if err != nil {
		t.Fatal(err)
	}
	c := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: parent, Time: time.Unix(1700000000, 0), Message: []byte("m")})
	if err := objs.Put(c); err != nil {
		t.Fatal(err)
	}
	return c.ID, ids
}

// contentsOf reads each file of ids from objs, or from written when a
// merge wrote it.
func contentsOf(t *testing.T, objs *cas.ObjectSet, ids map[string]cas.ID, written map[string][]byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, id := range ids {
		if c, ok := written[p]; ok {
			out[p] = string(c)
			continue
		}
		c, err := cas.ReadFile(objs, id)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[p] = string(c)
	}
	return out
}

// TestRestoreTarget: a restore of a subdirectory at the accepted head
// rewrites only the files under it (paths named relative to it), removes
// what the head lacks there, and leaves the rest of the directory as it
// is; a path that names nothing, and a file that would need to be a
// directory, are refused before anything is planned.
func TestRestoreTarget(t *testing.T) {
	objs := cas.NewObjectSet()
	head, _ := notebook(t, objs, cas.ID{}, map[string]string{"d/a.md": "a0\n", "d/b.md": "b0\n", "top.md": "t0\n"})
	_, now := notebook(t, objs, head, map[string]string{"d/a.md": "a1\n", "d/new.md": "n\n", "top.md": "t1\n", "d/x": "file\n"})
	v := NewView(context.Background(), Observed{State: remote.State{Manifest: &remote.Manifest{Version: 2, Generation: 7, Head: head}}, Objects: memObjects{objs}, Engine: noEngine{t}})

	all, err := v.Restore(Latest, now, "d", nil)
	if err != nil {
		t.Fatal(err)
	}
	if all.Generation != 7 {
		t.Errorf("restored generation %d, want 7", all.Generation)
	}
	want := map[string]string{"d/a.md": "a0\n", "d/b.md": "b0\n", "top.md": "t1\n"}
	if got := contentsOf(t, objs, all.IDs, nil); !maps.Equal(got, want) {
		t.Errorf("the subdirectory restored: %v, want %v", got, want)
	}

	one, err := v.Restore(7, now, "d", []string{"a.md"})
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"d/a.md": "a0\n", "d/new.md": "n\n", "top.md": "t1\n", "d/x": "file\n"}
	if got := contentsOf(t, objs, one.IDs, nil); !maps.Equal(got, want) {
		t.Errorf("one file restored: %v, want %v", got, want)
	}

	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{"gone.md"}, `"d/gone.md" names no file at generation 7 nor in the directory.`},
		{[]string{"x/a.md"}, `"d/x/a.md" names no file at generation 7 nor in the directory.`},
	} {
		var arg *ArgumentError
		if _, err := v.Restore(Latest, now, "d", tc.paths); !errors.As(err, &arg) || arg.Msg != tc.want {
			t.Errorf("restore %v: %v, want an ArgumentError %q", tc.paths, err, tc.want)
		}
	}

	// The head holds a directory where the directory now holds a file.
	_, clash := notebook(t, objs, head, map[string]string{"d": "a file\n"})
	var arg *ArgumentError
	if _, err := v.Restore(Latest, clash, "", []string{"d/a.md"}); !errors.As(err, &arg) || !strings.Contains(arg.Msg, `needs a directory where the file "d" is`) {
		t.Errorf("a file under a file: %v, want an ArgumentError", err)
	}
}

// TestRevertTarget: the inverse of a publication is merged with the files
// now, so later work is kept and the overlap is a conflict; only the files
// under the reverted subdirectory change.
func TestRevertTarget(t *testing.T) {
	objs := cas.NewObjectSet()
	parent, _ := notebook(t, objs, cas.ID{}, map[string]string{"d/a.md": "1\n2\n3\n", "d/c.md": "c\n", "e/o.md": "o\n"})
	pub, _ := notebook(t, objs, parent, map[string]string{"d/a.md": "1\ntwo\n3\n", "d/b.md": "b\n", "d/c.md": "c2\n", "e/o.md": "o2\n"})
	// Later work: a line added after the publication's, c.md changed again
	// (it overlaps what the publication changed), o.md left alone.
	_, now := notebook(t, objs, pub, map[string]string{"d/a.md": "1\ntwo\n3\n4\n", "d/b.md": "b\n", "d/c.md": "c3\n", "e/o.md": "o2\n"})
	v := NewView(context.Background(), Observed{State: remote.State{Manifest: &remote.Manifest{Version: 2, Generation: 9, Head: pub}}, Objects: memObjects{objs}, Engine: noEngine{t}})
	load := func(id cas.ID) ([]byte, error) { return cas.ReadFile(objs, id) }

	tg, err := v.Revert(Publication{Generation: 4, Parent: parent, Head: pub}, now, "d", load)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Generation != 4 {
		t.Errorf("reverted generation %d, want 4", tg.Generation)
	}
	got := contentsOf(t, objs, tg.IDs, tg.Contents)
	if got["d/a.md"] != "1\n2\n3\n4\n" {
		t.Errorf("d/a.md: %q, want the publication's line undone and the later one kept", got["d/a.md"])
	}
	if _, ok := got["d/b.md"]; ok {
		t.Error("d/b.md, which the publication added, is still there")
	}
	if got["e/o.md"] != "o2\n" {
		t.Errorf("e/o.md, outside the subdirectory: %q, want it as it is now", got["e/o.md"])
	}
	if len(tg.Conflicts) != 1 || tg.Conflicts[0].Path != "d/c.md" {
		t.Errorf("conflicts %+v, want one on d/c.md", tg.Conflicts)
	}
	if !strings.Contains(got["d/c.md"], "c3\n") || !strings.Contains(got["d/c.md"], "c\n") {
		t.Errorf("d/c.md: %q, want both sides in conflict blocks", got["d/c.md"])
	}
	for p := range tg.Contents {
		if id, err := cas.WriteFile(nil, tg.Contents[p]); err != nil || id != tg.IDs[p] {
			t.Errorf("%s: the merge's content does not match its ID", p)
		}
	}

	whole, err := v.Revert(Publication{Generation: 4, Parent: parent, Head: pub}, now, "", load)
	if err != nil {
		t.Fatal(err)
	}
	if c := contentsOf(t, objs, whole.IDs, whole.Contents)["e/o.md"]; c != "o\n" {
		t.Errorf("e/o.md with the whole directory reverted: %q, want %q", c, "o\n")
	}
}

// TestBlameQueryCheck: the checks a blame request passes before the store
// is read.
func TestBlameQueryCheck(t *testing.T) {
	q, err := BlameQuery{Path: "./d//a.md/", Start: 2}.Check()
	if err != nil || q != (BlameQuery{Path: "d/a.md", Start: 2}) {
		t.Errorf("Check: %+v, %v; want the path normalised", q, err)
	}
	for _, tc := range []struct {
		q    BlameQuery
		want string
	}{
		{BlameQuery{Path: "."}, "Name a file of the notebook."},
		{BlameQuery{Path: "../a.md"}, "A path must stay inside the notebook"},
		{BlameQuery{Path: "a.md", Start: 5, End: 3}, "The line range 5,3 is not a range of lines"},
		{BlameQuery{Path: "a.md", End: -1}, "The line range 0,-1 is not a range of lines"},
	} {
		var arg *ArgumentError
		if _, err := tc.q.Check(); !errors.As(err, &arg) || !strings.HasPrefix(arg.Msg, tc.want) {
			t.Errorf("%+v: %v, want an ArgumentError %q", tc.q, err, tc.want)
		}
	}
}

// TestRestorePaths: the paths a restore names are normalised, and an empty
// one (an unset shell variable, most often) never means "everything".
func TestRestorePaths(t *testing.T) {
	got, err := RestorePaths([]string{"./a.md", "d/"})
	if err != nil || !slices.Equal(got, []string{"a.md", "d"}) {
		t.Errorf("RestorePaths: %v, %v; want [a.md d]", got, err)
	}
	var arg *ArgumentError
	if _, err := RestorePaths([]string{"a.md", ""}); !errors.As(err, &arg) || !strings.HasPrefix(arg.Msg, "An empty path names no file") {
		t.Errorf("an empty path: %v, want an ArgumentError", err)
	}
	if _, err := RestorePaths([]string{"../x"}); !errors.As(err, &arg) {
		t.Errorf("a path outside the notebook: %v, want an ArgumentError", err)
	}
}
