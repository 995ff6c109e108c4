package workdir

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestNameRules(t *testing.T) {
	valid := []string{"a.md", "notes", ".hidden", "ü.md", "日本.md", "a b.md", "con-notes.md", "COM10", "lpt.md", "x.git"}
	invalid := []string{
		"", ".", "..", ".git", ".GIT", "a:b", "a*b", "a?b", `a"b`, "a<b", "a>b", "a|b", `a\b`,
		"tab\there", "del\x7f", "c1\u0085", "ends.", "ends ", "CON", "con.txt", "Nul.md", "COM1", "lpt9.log",
		"COM¹", "e\u0301", strings.Repeat("x", 256), "bad\xff",
	}
	for _, n := range valid {
		if r := nameReason(n); r != "" {
			t.Errorf("%q refused: %s", n, r)
		}
	}
	for _, n := range invalid {
		if r := nameReason(n); r != FileInvalidName {
			t.Errorf("%q accepted", n)
		}
	}
	if nameReason(strings.Repeat("x", 255)) != "" {
		t.Errorf("a 255-byte name is valid")
	}
}

func TestNameCollisions(t *testing.T) {
	got := collisions([]string{"Readme.md", "README.md", "other.md", "Straße", "STRASSE", "k", "\u212a"})
	var names []string
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	want := []string{"README.md", "Readme.md", "STRASSE", "Straße", "k", "\u212a"}
	sort.Strings(want)
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("collisions %v, want %v", names, want)
	}
	if collisions([]string{"a", "b"}) != nil {
		t.Fatal("no collision expected")
	}
}
