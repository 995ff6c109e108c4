package server

import (
	"context"
	"reflect"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// A commit that changes files outside the writable set or inside the
// read-only set is refused with READ_ONLY_PATH; exactly those files are
// reset to the accepted content, other local edits stay, nothing is
// published, and the next commit publishes the allowed edits.
func TestReadOnlyRefusalResets(t *testing.T) {
	store := memstore.New()
	admin := newAgent(t, store)
	admin.pull()
	admin.write("notes/a.md", "a\n")
	admin.write("notes/archive/old.md", "old\n")
	admin.write("docs/guide.md", "guide\n")
	admin.commit("seed")

	ag := newAgent(t, store, withSets([]string{"notes"}, []string{"notes/archive"}))
	ag.pull()
	ag.write("notes/a.md", "a\nmine\n")           // allowed
	ag.write("notes/archive/old.md", "changed\n") // inside read-only (longest match)
	ag.remove("docs/guide.md")                    // outside writable
	ag.write("top.md", "new\n")                   // outside writable, added
	puts := store.Calls(memstore.OpPut)

	_, err := ag.e.Commit(context.Background(), "", "mixed")
	de := domainErr(t, err, diag.CodeReadOnlyPath, diag.ReasonInsideReadOnly)
	want := []string{"docs/guide.md:OUTSIDE_WRITABLE", "notes/archive/old.md:INSIDE_READ_ONLY", "top.md:OUTSIDE_WRITABLE"}
	if got := fileReasons(de); !reflect.DeepEqual(got, want) {
		t.Fatalf("refused files %v, want %v", got, want)
	}
	if store.Calls(memstore.OpPut) != puts {
		t.Fatalf("a refused commit uploaded a pack")
	}
	equalMaps(t, "after the refusal", ag.files(), map[string]string{
		"notes/a.md": "a\nmine\n", "notes/archive/old.md": "old\n", "docs/guide.md": "guide\n",
	})

	res := ag.commit("allowed only")
	equalMaps(t, "published", stats(res.Files), map[string][2]int{"notes/a.md": {1, 0}})
}
