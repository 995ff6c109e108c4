package workdir

import (
	"strings"
	"testing"
)

func TestIgnorePatterns(t *testing.T) {
	cases := []struct {
		pattern string
		path    string // a file path; "dir/" tests a directory entry
		want    bool
	}{
		{".DS_Store", ".DS_Store", true},
		{".DS_Store", "a/b/.DS_Store", true},
		{".DS_Store", "a/.DS_Store.md", false},
		{"*.png", "img/x.png", true},
		{"*.png", "x.png.md", false},
		{"*.png", "png", false},
		{"*~", "notes.md~", true},
		{"*~", "dir~/", true},
		{"#*#", "#notes.md#", true},
		{"#*#", "#", false},
		{".#*", "a/.#notes.md", true},
		{"._*", "._notes.md", true},
		{"n?tes.md", "sub/notes.md", true},
		{"[ab].md", "b.md", true},
		{"[ab].md", "c.md", false},
		{"cache/", "cache/", true},
		{"cache/", "cache", false},
		{"cache/", "x/cache/", true},
		{"drafts/*.md", "drafts/a.md", true},
		{"drafts/*.md", "x/drafts/a.md", false},
		{"drafts/*.md", "drafts/sub/a.md", false},
		{"/build", "build/", true},
		{"/build", "build", true},
		{"/build", "x/build", false},
		{"/build", "x/build/", false},
		{"**/tmp", "tmp/", true},
		{"**/tmp", "a/b/tmp", true},
		{"logs/**", "logs/a/b.md", true},
		{"logs/**", "x/logs/a.md", false},
		{"a/**/z.md", "a/z.md", true},
		{"a/**/z.md", "a/b/c/z.md", true},
		{"a/**/z.md", "a/b/c/y.md", false},
	}
	for _, c := range cases {
		r, err := NewIgnore([]string{c.pattern}, false)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		var got bool
		if p, dir := c.path, c.path[len(c.path)-1] == '/'; dir {
			p = p[:len(p)-1]
			got = r.MatchPath(p + "/x") // a file below the directory
			if entry := matchDir(r, p); entry != got {
				t.Errorf("%q on %q: the directory entry %v, a file below it %v", c.pattern, c.path, entry, got)
			}
		} else {
			got = r.MatchPath(p)
		}
		if got != c.want {
			t.Errorf("%q on %q: %v, want %v", c.pattern, c.path, got, c.want)
		}
		if !r.MayMatchBytes([]byte(c.path)) && got {
			t.Errorf("%q on %q: the byte filter rejects a match", c.pattern, c.path)
		}
	}
	for _, bad := range []string{"", "!x", "a\\b", "a/../b", "x**", "**", "[", "a//b"} {
		if _, err := NewIgnore([]string{bad}, false); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

// matchDir is MatchPath for a directory path, entry by entry as the scan
// tests it.
func matchDir(r *Ignore, p string) bool {
	st := r.rootStates()
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		ign, below := r.matchEntry(st, seg, true)
		if ign {
			return true
		}
		if i == len(segs)-1 {
			return false
		}
		st = below
	}
	return false
}

func TestDefaultIgnores(t *testing.T) {
	r, _ := NewIgnore(nil, true)
	for _, p := range []string{".DS_Store", "a/._x.md", "Thumbs.db", "desktop.ini", ".notes.md.swp", ".notes.md.swo", "notes.md~", "#notes.md#", ".#notes.md"} {
		if !r.MatchPath(p) {
			t.Errorf("%s is not ignored by default", p)
		}
	}
	for _, p := range []string{"notes.md", "a/b.md", "swp", "x#y.md", "DS_Store"} {
		if r.MatchPath(p) {
			t.Errorf("%s is ignored by default", p)
		}
	}
	none, _ := NewIgnore(nil, false)
	if none.MatchPath(".DS_Store") || !none.Empty() {
		t.Error("--no-default-ignores still ignores")
	}
	if len(r.Patterns()) != 0 {
		t.Error("the defaults count as configured patterns")
	}
}

// MayMatchBytes, the filter that spares a path the rules, never turns away
// a path the rules match: with rules that need a name's first byte, its
// last, or both, every ignored path below passes it.
func TestIgnoreFilterKeepsEveryMatch(t *testing.T) {
	r, err := NewIgnore([]string{"draft*", "*.tmp", "a*z", "exact.md", "build/", "logs/**/x.md"}, true)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"draft1.md", "drafts", "x.tmp", "abcz", "az", "exact.md", "build", "desktop.ini", ".DS_Store",
		"#a#", ".#a", "a.swp", "a~", "._a", "Thumbs.db", "d042", "notes.md", "a", "z", "x.md", "logs"}
	ignored := 0
	for _, a := range names {
		for _, b := range names {
			for _, p := range []string{a, a + "/" + b, "d042/" + a + "/" + b, "logs/" + a + "/" + b} {
				if !r.MatchPath(p) {
					continue
				}
				ignored++
				if !r.MayMatchBytes([]byte(p)) {
					t.Errorf("%s is ignored, but the filter turns it away", p)
				}
			}
		}
	}
	if ignored == 0 {
		t.Fatal("no path was ignored: the test checks nothing")
	}
	if defaults, _ := NewIgnore(nil, true); defaults.MayMatchBytes([]byte("d042/notes.md")) {
		t.Error("d042/notes.md passes the default rules' filter: desktop.ini needs a name ending in 'i' too")
	}
}

// A pattern that would leave out every file at the top of the notebook, or
// every file in every directory, is refused (it used to crash on `*` and
// `*/`); one that keeps some names is not, and no pattern panics.
func TestIgnoreRefusesEverything(t *testing.T) {
	for _, p := range []string{"*", "*/", " * ", "**/", "/*", "/**", "**/*", "**/**", "?*", "*?", "***/", "*/*", "*/**", "/*/", "**/*/", "/*/*"} {
		_, err := NewIgnore([]string{p}, false)
		if err == nil {
			t.Errorf("pattern %q accepted", p)
			continue
		}
		if _, err := NewIgnore([]string{"*.png", p}, true); err == nil {
			t.Errorf("pattern %q accepted after another one", p)
		}
	}
	// Two patterns that each keep half the names leave out all of them.
	if _, err := NewIgnore([]string{"[a-m]*", "[^a-m]*"}, false); err == nil {
		t.Error("two complementary patterns accepted")
	}
	for _, p := range []string{"?", "??*", "*.md", ".*", "[^x]*", "[!-~]*", "docs/*", "*/x", "*/*/*/", "**/tmp/", "a*", "*a", "*.*"} {
		r, err := NewIgnore([]string{p}, true)
		if err != nil {
			t.Errorf("pattern %q refused: %v", p, err)
			continue
		}
		if r.Empty() {
			t.Errorf("pattern %q compiled to nothing", p)
		}
	}
}
