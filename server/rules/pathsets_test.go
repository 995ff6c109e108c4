package rules

import (
	"reflect"
	"testing"
)

func TestPathSetLongestMatch(t *testing.T) {
	sets, err := NewSets([]string{"notes/", "./notes/archive/keep", "x"}, []string{"notes/archive", "x/y"})
	if err != nil {
		t.Fatal(err)
	}
	if w, r := sets.writable, sets.readOnly; !reflect.DeepEqual(w, []string{"notes", "notes/archive/keep", "x"}) || !reflect.DeepEqual(r, []string{"notes/archive", "x/y"}) {
		t.Fatalf("normalised sets %v %v", w, r)
	}
	for p, want := range map[string]Refusal{
		"notes/a.md":              Allowed,
		"notes":                   Allowed,
		"notesx.md":               OutsideWritable,
		"notes/archive/b.md":      InsideReadOnly,
		"notes/archive/keep/c.md": Allowed,
		"notes/archive/keeper.md": InsideReadOnly,
		"x/y/z":                   InsideReadOnly,
		"x/yz":                    Allowed,
		"other.md":                OutsideWritable,
	} {
		if got := sets.Check(p); got != want {
			t.Errorf("Check(%q) = %v, want %v", p, got, want)
		}
	}
	onlyRO, _ := NewSets(nil, []string{"docs"})
	if onlyRO.Check("a.md") != Allowed || onlyRO.Check("docs/a.md") != InsideReadOnly {
		t.Fatalf("read-only set alone")
	}
	for _, bad := range [][2][]string{{{"/abs"}, nil}, {{"../up"}, nil}, {{""}, nil}, {{"a"}, {"a/"}}} {
		if _, err := NewSets(bad[0], bad[1]); err == nil {
			t.Errorf("sets %v accepted", bad)
		}
	}
}
