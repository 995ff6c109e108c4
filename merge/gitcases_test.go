package merge

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Each directory of testdata/git holds base, local, remote and want, the
// output of `git merge-file -p -L local -L base -L remote` (git 2.39).
// They are generated cases that a plain diff gets wrong: slide-* need the
// hunk placement of rule 1, discard-* the lines that only one file has left
// out of go-diff's input; without those steps they conflict where git
// merges cleanly. TextStrict must give git's output on them.
func TestGitCases(t *testing.T) {
	dirs, err := filepath.Glob("testdata/git/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, d := range dirs {
		t.Run(filepath.Base(d), func(t *testing.T) {
			read := func(name string) []byte {
				b, err := os.ReadFile(filepath.Join(d, name))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			want := read("want")
			got := TextStrict(read("base"), read("local"), read("remote"))
			if !bytes.Equal(got.Content, want) {
				t.Errorf("output differs from git's:\n%s\nwant:\n%s", got.Content, want)
			}
			if gitConflict := bytes.Contains(want, []byte("\n<<<<<<< local")); gitConflict != (len(got.Conflicts) > 0) {
				t.Errorf("conflicts %v, git conflicted: %v", got.Conflicts, gitConflict)
			}
		})
	}
}
