package server

import (
	"reflect"
	"testing"
)

// After a commit the store accepted but whose process died before the
// baseline was recorded, status does not list the published edits as
// local changes (the next commit would not publish them again either);
// edits made after the crash are listed.
func TestStatusAfterKilledCommitOmitsPublishedEdits(t *testing.T) {
	store, a := editAfterCommit(t) // n.md committed as "a\n", then "x\n" appended
	a.write("gone.md", "g\n")
	a.commit("gone")
	a.remove("gone.md")
	a.write("new.md", "new\n")
	a.appendTo("n.md", "z\n")
	killCommitAt(t, a, store, FailAfterPublish, "two")

	st, err := a.e.Status(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	clean := &Status{Path: a.dir, BaseGeneration: 2, Generation: 3, Added: []string{}, Modified: []string{}, Deleted: []string{}}
	if !reflect.DeepEqual(st, clean) {
		t.Fatalf("status after the killed commit\n got  %+v\n want %+v", st, clean)
	}

	a.appendTo("n.md", "y\n")
	a.write("later.md", "l\n")
	st, err = a.e.Status(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := &Status{Path: a.dir, BaseGeneration: 2, Generation: 3, Added: []string{"later.md"}, Modified: []string{"n.md"}, Deleted: []string{}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("status after a later edit\n got  %+v\n want %+v", st, want)
	}
}
