package server

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// Overlapping edits: the second commit publishes nothing, writes conflict
// blocks with exact ranges into L, and after the blocks are resolved the
// commit goes through. Committing with the blocks still there is refused.
func TestCommitConflict(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("today.md", "l1\nl2\nl3\nl4\nl5\n")
	a.commit("base")
	b.pull()

	a.write("today.md", "l1\nl2\nA-three\nl4\nl5\n")
	a.commit("a edits line 3")
	b.write("today.md", "l1\nl2\nB-three\nl4\nl5\n")

	_, err := b.e.Commit(context.Background(), "", "b edits line 3")
	de := domainErr(t, err, diag.CodeContentConflict, diag.ReasonMergeConflict)
	if got, want := fileReasons(de), []string{"today.md:TEXT_CONFLICT:3-7"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("conflict files %v, want %v", got, want)
	}
	want := "l1\nl2\n<<<<<<< local\nB-three\n=======\nA-three\n>>>>>>> remote\nl4\nl5\n"
	if got := b.read("today.md"); got != want {
		t.Fatalf("conflict content:\n%s\nwant:\n%s", got, want)
	}
	// The remote still holds a's version only.
	c := newAgent(t, store)
	if res := c.pull(); res.Generation != 2 || c.read("today.md") != "l1\nl2\nA-three\nl4\nl5\n" {
		t.Fatalf("remote changed by a conflicting commit: gen %d %q", res.Generation, c.read("today.md"))
	}

	// Unresolved blocks are refused, with their ranges, before anything.
	b.write("other.md", "x\n")
	_, err = b.e.Commit(context.Background(), "", "still conflicted")
	de = domainErr(t, err, diag.CodeContentConflict, diag.ReasonUnresolvedMarkers)
	if got, want := fileReasons(de), []string{"today.md:CONFLICT_MARKERS:3-7"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("marker files %v, want %v", got, want)
	}

	// Resolve: the resolution and the other file are published.
	b.write("today.md", "l1\nl2\nA+B three\nl4\nl5\n")
	res := b.commit("resolved")
	if res.Generation != 3 {
		t.Fatalf("generation %d", res.Generation)
	}
	equalMaps(t, "increment over a's version", stats(res.Files), map[string][2]int{"today.md": {1, 1}, "other.md": {1, 0}})
	a.pull()
	equalMaps(t, "a sees the resolution", a.files(), b.files())
}

// A pull that meets overlapping edits writes the blocks, records the
// remote state and reports the conflict; a modify/delete conflict keeps
// the modified file and carries no ranges.
func TestPullConflict(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("x.md", "1\n2\n3\n")
	a.write("gone.md", "keep me\n")
	a.commit("base")
	b.pull()

	a.write("x.md", "1\nremote\n3\n")
	a.remove("gone.md")
	a.commit("remote side")

	b.write("x.md", "1\nlocal\n3\n")
	b.write("gone.md", "keep me\nedited\n")
	_, err := b.e.Pull(context.Background(), "")
	de := domainErr(t, err, diag.CodeContentConflict, diag.ReasonMergeConflict)
	if got, want := fileReasons(de), []string{"gone.md:MODIFY_DELETE", "x.md:TEXT_CONFLICT:2-6"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("conflicts %v, want %v", got, want)
	}
	if got := b.read("gone.md"); got != "keep me\nedited\n" {
		t.Fatalf("modified file not kept: %q", got)
	}
	if !strings.Contains(b.read("x.md"), "<<<<<<< local\nlocal\n=======\nremote\n>>>>>>> remote\n") {
		t.Fatalf("no conflict block: %q", b.read("x.md"))
	}
	// Resolving and committing publishes both resolutions.
	b.write("x.md", "1\nboth\n3\n")
	b.commit("resolve")
	a.pull()
	equalMaps(t, "after resolution", a.files(), map[string]string{"x.md": "1\nboth\n3\n", "gone.md": "keep me\nedited\n"})
}
