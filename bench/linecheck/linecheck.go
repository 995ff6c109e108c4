// Package linecheck is the line audit that makes a load run a correctness
// test too: every writer tags each line it adds with its name and a
// sequence number, and the final notebook must hold every line of an
// accepted commit exactly once. The load generator (bench/loadgen) and the
// fleet simulation (bench/fleetsim) share it; each passes the pattern of
// its own tags.
package linecheck

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Audit is the line audit of a final notebook.
type Audit struct {
	Expected   int      // tagged lines of accepted commits
	Found      int      // tagged lines in the notebook
	Lost       []string // accepted lines missing
	Duplicated []string // tagged lines present more than once
	Unknown    []string // tagged lines no writer wrote (corruption)
}

// OK reports whether nothing was lost, duplicated or invented.
func (a Audit) OK() bool {
	return len(a.Lost) == 0 && len(a.Duplicated) == 0 && len(a.Unknown) == 0
}

// Check audits tree (path -> content) for the lines tagged matches.
// accepted lines must appear exactly once; written lines (a superset:
// lines of commits that were not accepted may or may not be there) must
// not appear twice; any other tagged line is unknown. A line's trailing CR
// is not part of it.
func Check(tree map[string][]byte, tagged *regexp.Regexp, accepted, written []string) Audit {
	counts := map[string]int{}
	var order []string
	for _, p := range slices.Sorted(maps.Keys(tree)) {
		for _, l := range strings.Split(string(tree[p]), "\n") {
			l = strings.TrimSuffix(l, "\r")
			if !tagged.MatchString(l) {
				continue
			}
			if counts[l] == 0 {
				order = append(order, l)
			}
			counts[l]++
		}
	}
	known := map[string]bool{}
	for _, l := range written {
		known[l] = true
	}
	for _, l := range accepted {
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

// ReadTree reads every regular file under dir, keyed by slash path.
func ReadTree(dir string) (map[string][]byte, error) {
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
