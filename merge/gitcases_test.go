package merge

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Each directory of testdata/git holds base, local, remote and want, the
// output of `git merge-file -p -L local -L base -L remote` (git 2.39).
// slide-* and discard-* are generated cases that a plain diff gets wrong:
// slide-* need runs of changed lines placed as git places them, discard-*
// the lines that only one file has left out of go-diff's input; without
// those steps they conflict where git merges cleanly. rw-* are small
// hand-written documents of the kinds a notebook holds (a README, a
// changelog, a page with front matter and a table, meeting notes, one in
// CRLF) with the edits people make to them, clean and conflicting.
// TextStrict must give git's output on all of them, blocks included.
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
