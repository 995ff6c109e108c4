package fuzz

import (
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// FuzzIgnorePatterns: no pattern or path makes the ignore rules panic
// (`*` and `*/` once did, at start-up); an accepted rule set never
// matches a path its byte prefilter rejects, and keeps some file at the
// top of the notebook and some file in a directory (a set that would leave
// out everything is refused instead, with a one-line reason).
func FuzzIgnorePatterns(f *testing.F) {
	for _, seed := range [][3]string{
		{"*", "", "notes.md"},
		{"*/", "", "a/b.md"},
		{"**", "/**", "x"},
		{"*.png", "drafts/", "drafts/a.png"},
		{"a/**/z.md", "**/tmp", "a/b/tmp/z.md"},
		{"[a-m]*", "[^a-m]*", "q"},
		{"#*#", ".#*", "sub/.#x"},
		{"[", "!x", "a//b"},
		{"?*", "/build", "build/x"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	probes := topNames()
	f.Fuzz(func(t *testing.T, p1, p2, path string) {
		for _, set := range [][]string{{p1}, {p1, p2}} {
			for _, defaults := range []bool{false, true} {
				r, err := workdir.NewIgnore(set, defaults)
				if err != nil {
					if err.Error() == "" || strings.Contains(err.Error(), "\n") {
						t.Fatalf("%q: error %q is not one line", set, err)
					}
					continue
				}
				checkIgnore(t, r, set, path, probes)
			}
		}
	})
}

func checkIgnore(t *testing.T, r *workdir.Ignore, set []string, path string, probes []string) {
	if r.MatchPath(path) && !r.MayMatchBytes([]byte(path)) {
		t.Fatalf("%q on %q: the byte filter rejects a match", set, path)
	}
	kept := false
	for _, n := range probes {
		if !r.MatchPath(n) {
			kept = true
			break
		}
	}
	if !kept {
		t.Fatalf("%q accepted but leaves out every file at the top", set)
	}
	kept = false
	for _, d := range probes {
		for _, n := range probes {
			if !r.MatchPath(d+"/"+n) || !r.MatchPath(d+"/"+d+"/"+n) {
				kept = true
				break
			}
		}
		if kept {
			break
		}
	}
	if !kept {
		t.Fatalf("%q accepted but leaves out every file in every directory", set)
	}
}

// topNames are valid one-character names and a few ordinary ones.
func topNames() []string {
	var names []string
	for c := byte('!'); c <= '~'; c++ {
		if !strings.ContainsRune(`/\:*?"<>|.`, rune(c)) {
			names = append(names, string(c))
		}
	}
	return append(names, "é", "ß", "Ω", "я", "日", "😀", "notes.md", ".hidden", "a b", "README", "x.y.z", "☃")
}
