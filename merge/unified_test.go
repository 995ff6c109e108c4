package merge

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// gitHeading strips the function-name heading git appends to a hunk
// header: the notebook's diff leaves it out.
var gitHeading = regexp.MustCompile(`(?m)^(@@ -[0-9,]+ \+[0-9,]+ @@).*$`)

// gitDiffHunks returns the hunks `git diff --no-index` prints for old ->
// new (everything after the +++ line), headings stripped.
func gitDiffHunks(t *testing.T, dir string, old, new []byte) []byte {
	t.Helper()
	a, b := filepath.Join(dir, "old"), filepath.Join(dir, "new")
	if err := os.WriteFile(a, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, new, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/git", "diff", "--no-index", "--no-color", "--no-indent-heuristic", "-U3", a, b)
	cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("git diff: %v", err)
	}
	if i := bytes.Index(out, []byte("\n+++ ")); i >= 0 {
		out = out[i+1:]
		out = out[bytes.IndexByte(out, '\n')+1:]
	} else {
		out = nil
	}
	return gitHeading.ReplaceAll(out, []byte("$1"))
}

// TestUnifiedMatchesGitDiff: on seeded note edits (CRLF files, files
// without a final newline, empty sides included) the hunks are those of
// `git diff --no-indent-heuristic` (git's line diff without the sliding by
// indentation, the reference of the merge's own), byte for byte apart
// from the function-name heading git adds, in at least 96% of the diffs
// between versions (measured: 97.1% of 800): the rest are equally short
// diffs that go-diff chooses differently (merge/doc.go). Adding or
// removing a whole file is always git's.
func TestUnifiedMatchesGitDiff(t *testing.T) {
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	g := newNoteGen(20261201)
	n := 400
	if testing.Short() {
		n = 100
	}
	diffs, same := 0, 0
	for i := range n {
		c := g.next(i)
		for k, pair := range [][2][]byte{{c.base, c.local}, {c.remote, c.base}, {nil, c.local}, {c.remote, nil}} {
			got := AppendHunks(nil, Unified(pair[0], pair[1], -1))
			want := gitDiffHunks(t, dir, pair[0], pair[1])
			if k < 2 {
				diffs++
			}
			if bytes.Equal(got, want) {
				if k < 2 {
					same++
				}
				continue
			}
			if k >= 2 {
				t.Fatalf("%s: a whole file's hunks differ from git's\n--- ours\n%s\n--- git\n%s", c.name, got, want)
			}
			t.Logf("%s: hunks differ from git's\n--- ours\n%s\n--- git\n%s", c.name, got, want)
		}
	}
	rate := float64(same) / float64(diffs)
	t.Logf("%d of %d diffs between versions (%.2f%%) byte-identical to git diff's", same, diffs, 100*rate)
	if rate < 0.96 {
		t.Errorf("%.2f%% of diffs identical to git's < 96%%", 100*rate)
	}
}

func TestUnifiedEdges(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		want     string
	}{
		{"equal", "a\n", "a\n", ""},
		{"add to empty", "", "a\nb", "@@ -0,0 +1,2 @@\n+a\n+b\n" + NoNewline + "\n"},
		{"remove all", "a\n", "", "@@ -1 +0,0 @@\n-a\n"},
		{"final newline added", "a\nb", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n" + NoNewline + "\n+b\n"},
		{"crlf kept", "a\r\nb\r\n", "a\r\nc\r\n", "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"},
	} {
		got := string(AppendHunks(nil, Unified([]byte(tc.old), []byte(tc.new), -1)))
		if got != tc.want {
			t.Errorf("%s: got\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}
