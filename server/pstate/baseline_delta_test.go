package pstate

import (
	"maps"
	"reflect"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// A commit finds L's changes from A (modified, added, removed paths, with
// A's old IDs for the diffstat) the same way whether A was just loaded
// from P (encoded entries) or is already decoded.
func TestBaselineDelta(t *testing.T) {
	id := func(s string) cas.ID { return cas.Sum([]byte(s)) }
	a := map[string]cas.ID{"keep.md": id("k"), "mod.md": id("m"), "del.md": id("d"), "sub/x.md": id("x")}
	l := map[string]cas.ID{"keep.md": id("k"), "mod.md": id("m2"), "sub/x.md": id("x"), "new.md": id("n")}
	wantChanges := map[string]cas.ID{"mod.md": id("m2"), "del.md": {}, "new.md": id("n")}
	wantOld := map[string]cas.ID{"mod.md": id("m"), "del.md": id("d")}
	loaded, err := DecodeBaseline(encodeBaseline(&Baseline{Generation: 3, Head: id("h"), Files: a}))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Baseline{"encoded": loaded, "decoded": {Files: maps.Clone(a)}} {
		changes, old := b.Delta(l)
		equalMaps(t, name+" changes", changes, wantChanges)
		equalMaps(t, name+" old IDs", old, wantOld)
		if changes, old := b.Delta(maps.Clone(a)); len(changes)+len(old) != 0 {
			t.Fatalf("%s: L == A has changes %v", name, changes)
		}
	}
}

func equalMaps[V comparable](t *testing.T, what string, got, want map[string]V) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %v\n want %v", what, got, want)
	}
}
