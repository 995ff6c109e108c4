package merge

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDifferentialCorpus merges the cases of a corpus directory with
// TextStrict and with git merge-file, as TestDifferentialAgainstGit does
// with generated notes. MERGE_CORPUS names the directory: one subdirectory
// per case holding base, local and remote (a file both parents of a real
// merge commit changed, the merge base's version as base, empty when it
// had none). Without it the test is skipped: the corpus is built from
// public repositories' history and not kept here.
//
// Where git merges cleanly, at least 99% of the cases must give its bytes
// (a real corpus is small: one case can be more than 0.1% of it).
func TestDifferentialCorpus(t *testing.T) {
	root := os.Getenv("MERGE_CORPUS")
	if root == "" {
		t.Skip("MERGE_CORPUS not set")
	}
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("the reference git is not installed")
	}
	dirs, err := filepath.Glob(filepath.Join(root, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases in %s: %v", root, err)
	}
	dir := t.TempDir()
	var gitClean, same, conflictClean, bothConflict, notLarger, sameBlocks int
	for _, d := range dirs {
		read := func(name string) []byte {
			b, err := os.ReadFile(filepath.Join(d, name))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		c := noteCase{name: filepath.Base(d), base: read("base"), local: read("local"), remote: read("remote")}
		checkInvariants(t, c, TextStrict)
		want, gitConflict := gitMergeFile(t, dir, c)
		got := TextStrict(c.base, c.local, c.remote)
		conflicts := len(got.Conflicts) > 0
		switch {
		case !gitConflict:
			gitClean++
			if !conflicts && bytes.Equal(got.Content, want) {
				same++
			} else {
				t.Logf("%s: git clean, here %d blocks", c.name, len(got.Conflicts))
				dumpCase(t, c, got.Content, want)
			}
		case !conflicts:
			conflictClean++
			t.Logf("%s: git conflicts, clean here", c.name)
		default:
			bothConflict++
			if blockLines(got.Content) <= blockLines(want) {
				notLarger++
			}
			if bytes.Equal(got.Content, want) {
				sameBlocks++
			}
		}
		// Rules 6 and 7 only decide what rules 1-5 make conflicts.
		if !conflicts {
			if text := Text(c.base, c.local, c.remote); !bytes.Equal(text.Content, got.Content) || len(text.Conflicts) != 0 {
				t.Errorf("%s: Text differs from TextStrict on a merge TextStrict makes clean", c.name)
			}
		}
	}
	t.Logf("%d cases: git clean %d, the same bytes here %d; git conflicts %d, clean here %d; both conflict %d, same blocks %d, blocks no larger than git's %d",
		len(dirs), gitClean, same, len(dirs)-gitClean, conflictClean, bothConflict, sameBlocks, notLarger)
	if float64(same) < 0.99*float64(gitClean) {
		t.Errorf("git-clean cases with git's bytes: %d of %d", same, gitClean)
	}
}
