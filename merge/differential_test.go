package merge

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// gitMergeFile runs the reference, `git merge-file -p -L local -L base -L
// remote`, and returns its output and whether it reported conflicts.
func gitMergeFile(t testing.TB, dir string, c noteCase) ([]byte, bool) {
	t.Helper()
	paths := make([]string, 3)
	for i, b := range [][]byte{c.local, c.base, c.remote} {
		paths[i] = filepath.Join(dir, []string{"local", "base", "remote"}[i])
		if err := os.WriteFile(paths[i], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("/usr/bin/git", "merge-file", "-p", "-L", "local", "-L", "base", "-L", "remote", paths[0], paths[1], paths[2])
	cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out, false
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128:
		return out, true
	}
	t.Fatalf("%s: git merge-file: %v", c.name, err)
	return nil, false
}

// TestDifferentialAgainstGit merges seeded, realistic note edits with Text
// and with git 2.39's merge-file. Where git merges cleanly, the bytes must be
// identical in at least 99% of cases; where git conflicts, Text conflicts.
func TestDifferentialAgainstGit(t *testing.T) {
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("the reference git is not installed")
	}
	n := 1500
	if testing.Short() {
		n = 200
	}
	seed := uint64(20261130)
	if s := os.Getenv("MERGE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	g := newNoteGen(seed)
	dir := t.TempDir()
	var clean, cleanSame, conflicts, conflictSame, missed int
	for i := range n {
		c := g.next(i)
		want, gitConflict := gitMergeFile(t, dir, c)
		got := Text(c.base, c.local, c.remote)
		same := bytes.Equal(got.Content, want)
		if gitConflict {
			conflicts++
			if len(got.Conflicts) == 0 {
				missed++
				t.Errorf("%s: git conflicts, Text merged cleanly", c.name)
				dumpCase(t, c, got.Content, want)
			}
			if same {
				conflictSame++
			} else if len(got.Conflicts) > 0 {
				dumpCase(t, c, got.Content, want)
			}
			continue
		}
		clean++
		if same {
			cleanSame++
		} else {
			t.Logf("%s: git clean, Text differs (conflicts %v)", c.name, got.Conflicts)
			dumpCase(t, c, got.Content, want)
		}
	}
	rate := float64(cleanSame) / float64(max(clean, 1))
	t.Logf("git clean: %d, byte-identical: %d (%.2f%%); git conflicts: %d, conflict here too: %d, identical output: %d",
		clean, cleanSame, 100*rate, conflicts, conflicts-missed, conflictSame)
	if rate < 0.99 {
		t.Errorf("agreement on git-clean merges %.2f%% < 99%%", 100*rate)
	}
}

func dumpCase(t *testing.T, c noteCase, got, want []byte) {
	t.Helper()
	if os.Getenv("MERGE_DUMP") == "" {
		return
	}
	d := filepath.Join(os.Getenv("MERGE_DUMP"), c.name)
	_ = os.MkdirAll(d, 0o755)
	for name, b := range map[string][]byte{"base": c.base, "local": c.local, "remote": c.remote, "got": got, "git": want} {
		_ = os.WriteFile(filepath.Join(d, name), b, 0o644)
	}
}
