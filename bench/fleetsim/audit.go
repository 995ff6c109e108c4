package fleetsim

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Every line an agent commits starts with its tag and sequence number
// ("a0042-c003 ..."), so the final notebook can be audited line by line.
// (bench/loadgen has the same audit with three-digit tags; it is a command,
// so it cannot be imported.)
var taggedLine = regexp.MustCompile(`^a[0-9]{4}-c[0-9]{3} `)

// Audit is the line audit of a final notebook.
type Audit struct {
	Expected   int      // tagged lines of accepted commits
	Found      int      // tagged lines in the notebook
	Lost       []string // accepted lines missing
	Duplicated []string // tagged lines present more than once
	Unknown    []string // tagged lines no agent wrote
}

// OK reports whether nothing was lost, duplicated or invented.
func (a Audit) OK() bool { return len(a.Lost) == 0 && len(a.Duplicated) == 0 && len(a.Unknown) == 0 }

// checkLines audits tree (path -> content): every accepted line exactly
// once, no written line (accepted or not) twice, no other tagged line.
func checkLines(tree map[string][]byte, accepted, written []string) Audit {
	counts := map[string]int{}
	var order []string
	for _, p := range slices.Sorted(maps.Keys(tree)) {
		for _, l := range strings.Split(string(tree[p]), "\n") {
			if !taggedLine.MatchString(l) {
				continue
			}
			if counts[l] == 0 {
				order = append(order, l)
			}
			counts[l]++
		}
	}
	known := map[string]bool{}
	for _, l := range append(slices.Clip(written), accepted...) {
		known[l] = true
	}
	a := Audit{Expected: len(accepted)}
	for _, l := range accepted {
		if counts[l] == 0 {
			a.Lost = append(a.Lost, l)
		}
	}
	for _, l := range order {
		a.Found += counts[l]
		if counts[l] > 1 {
			a.Duplicated = append(a.Duplicated, l)
		}
		if !known[l] {
			a.Unknown = append(a.Unknown, l)
		}
	}
	return a
}

// readTree reads every regular file under dir, keyed by slash path.
func readTree(dir string) (map[string][]byte, error) {
	tree := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		tree[filepath.ToSlash(rel)] = data
		return nil
	})
	return tree, err
}
