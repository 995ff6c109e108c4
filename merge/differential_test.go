package merge

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// TestDifferentialAgainstGit merges seeded, realistic note edits with
// TextStrict and with git 2.39's merge-file, and counts every disagreement
// by kind. Where git merges cleanly, at least 99.9% of the merges must be
// clean with the same bytes (99.5% with -short, where one case is 0.2%);
// cases where git conflicts and the merge is clean must stay at most 0.4%
// of all cases (a shorter-or-equal diff keeps the changes apart there:
// doc.go); conflict blocks identical to git's, at least 90%, and where
// both conflict, the lines inside blocks no more than git's in at least
// 90% of the cases. Every case also checks the invariants
// (checkInvariants).
//
// MERGE_SEED picks another seed, MERGE_CASES another count, MERGE_DUMP=<dir>
// writes every differing case there.
func TestDifferentialAgainstGit(t *testing.T) {
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("the reference git is not installed")
	}
	n := 3000
	if testing.Short() {
		n = 1000 // fewer, and a single case would be 0.5% of them
	}
	if s := os.Getenv("MERGE_CASES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	seed := uint64(20261130)
	if s := os.Getenv("MERGE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	g := newNoteGen(seed)
	dir := t.TempDir()
	// The kinds of outcome, git's verdict first.
	const (
		cleanSame      = "git clean, clean here, same bytes"
		cleanOther     = "git clean, clean here, other bytes"
		cleanConflicts = "git clean, conflicts here"
		conflictClean  = "git conflicts, clean here"
		conflictSame   = "git conflicts, same blocks here"
		conflictBlocks = "git conflicts, other blocks here"
	)
	count := map[string]int{}
	// Where both conflict: the lines inside our blocks against git's.
	var smaller, equal, larger int
	for i := range n {
		c := g.next(i)
		checkInvariants(t, c, TextStrict)
		want, gitConflict := gitMergeFile(t, dir, c)
		got := TextStrict(c.base, c.local, c.remote)
		same := bytes.Equal(got.Content, want)
		var k string
		switch conflicts := len(got.Conflicts) > 0; {
		case !gitConflict && !conflicts && same:
			k = cleanSame
		case !gitConflict && !conflicts:
			k = cleanOther
		case !gitConflict:
			k = cleanConflicts
		case !conflicts:
			k = conflictClean
		case same:
			k = conflictSame
		default:
			k = conflictBlocks
		}
		count[k]++
		if gitConflict && len(got.Conflicts) > 0 {
			switch ours, theirs := blockLines(got.Content), blockLines(want); {
			case ours < theirs:
				smaller++
			case ours == theirs:
				equal++
			default:
				larger++
			}
		}
		if !same {
			t.Logf("%s: %s", c.name, k)
			dumpCase(t, c, got.Content, want)
		}
	}
	gitClean := count[cleanSame] + count[cleanOther] + count[cleanConflicts]
	gitConflicts := n - gitClean
	for _, k := range []string{cleanSame, cleanOther, cleanConflicts, conflictClean, conflictSame, conflictBlocks} {
		t.Logf("%-36s %5d", k, count[k])
	}
	rate := float64(count[cleanSame]) / float64(max(gitClean, 1))
	missed := float64(count[conflictClean]) / float64(max(n, 1))
	blocks := float64(count[conflictSame]) / float64(max(gitConflicts, 1))
	t.Logf("seed %d: git clean %d, %.2f%% the same here; git conflicts %d, %.2f%% of all cases clean here, %.2f%% the same blocks",
		seed, gitClean, 100*rate, gitConflicts, 100*missed, 100*blocks)
	both := smaller + equal + larger
	notLarger := float64(smaller+equal) / float64(max(both, 1))
	t.Logf("both conflict %d: lines inside blocks fewer than git's %d, as many %d, more %d (%.2f%% no more)",
		both, smaller, equal, larger, 100*notLarger)
	if minRate := 0.999; rate < minRate && !testing.Short() || rate < 0.995 {
		t.Errorf("agreement on git-clean merges %.2f%% below the bound", 100*rate)
	}
	if missed > 0.004 {
		t.Errorf("clean where git conflicts in %.2f%% of cases > 0.4%%", 100*missed)
	}
	if notLarger < 0.90 {
		t.Errorf("blocks no larger than git's in %.2f%% of the cases both conflict < 90%%", 100*notLarger)
	}
	if blocks < 0.90 {
		t.Errorf("conflict blocks the same as git's %.2f%% < 90%%", 100*blocks)
	}
}

// blockLines counts the lines of content inside conflict blocks, markers
// included.
func blockLines(content []byte) int {
	n := 0
	for _, r := range ScanMarkers(content) {
		n += r.End - r.Start + 1
	}
	return n
}

// checkInvariants checks what a merge must do whatever the diff: an
// unchanged side gives the other side, equal sides give that side, and
// the blocks written are the blocks the scanner finds.
func checkInvariants(t *testing.T, c noteCase, merge func(base, local, remote []byte) TextResult) {
	t.Helper()
	if got := merge(c.base, c.base, c.remote); !bytes.Equal(got.Content, c.remote) || got.Conflicts != nil {
		t.Fatalf("%s: local == base must give remote", c.name)
	}
	if got := merge(c.base, c.local, c.base); !bytes.Equal(got.Content, c.local) || got.Conflicts != nil {
		t.Fatalf("%s: remote == base must give local", c.name)
	}
	if got := merge(c.base, c.local, c.local); !bytes.Equal(got.Content, c.local) || got.Conflicts != nil {
		t.Fatalf("%s: local == remote must give local", c.name)
	}
	got := merge(c.base, c.local, c.remote)
	if scanned := ScanMarkers(got.Content); !equalRanges(scanned, got.Conflicts) {
		t.Fatalf("%s: scanner found %v, merge wrote %v", c.name, scanned, got.Conflicts)
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

// Large files of few distinct lines (1,000 words, each line about 30
// times), rewritten on both sides: lightly rewritten, the output equals
// git's byte for byte; rewritten heavily, both diffs take shortcuts to stay
// fast (git its cost limits, ours the cut of split.go when no line is
// unique), not the same ones, so there only the verdict must agree.
func TestDifferentialLargeRewrites(t *testing.T) {
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("the reference git is not installed")
	}
	if testing.Short() {
		t.Skip("large inputs")
	}
	r := rand.New(rand.NewPCG(5, 6))
	word := func(prefix string) string { return fmt.Sprintf("%s%d\n", prefix, r.IntN(1000)) }
	words := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = word("w")
		}
		return w
	}
	edit := func(base []string, rate float64) []byte {
		var b strings.Builder
		for _, l := range base {
			switch x := r.Float64(); {
			case x < rate/3:
			case x < 2*rate/3:
				b.WriteString(word("n") + l)
			case x < rate:
				b.WriteString(word("n"))
			default:
				b.WriteString(l)
			}
		}
		return []byte(b.String())
	}
	base := append(append(words(150), words(100)...), words(30000)...)
	dir := t.TempDir()
	for i, rate := range []float64{0.01, 0.3, 0.6} {
		c := noteCase{name: fmt.Sprintf("rewrite%d", i), base: []byte(strings.Join(base, "")),
			local: edit(base, rate), remote: edit(base, rate/2)}
		want, gitConflict := gitMergeFile(t, dir, c)
		got := TextStrict(c.base, c.local, c.remote)
		if rate < 0.1 && !bytes.Equal(got.Content, want) {
			t.Errorf("%s: output differs from git's", c.name)
			dumpCase(t, c, got.Content, want)
		}
		if gitConflict != (len(got.Conflicts) > 0) {
			t.Errorf("%s: conflicts %d, git conflicted: %v", c.name, len(got.Conflicts), gitConflict)
		}
		checkInvariants(t, c, TextStrict)
	}
}
