package main

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The writers of contention and agents tag every line they add with their
// name and a sequence number ("w007-c003 ..."), so the final notebook can be
// audited line by line: each line of an accepted commit must be present
// exactly once.
var taggedLine = regexp.MustCompile(`^[wa][0-9]{3}-c[0-9]{3} `)

// LineCheck is the audit of a final notebook.
type LineCheck struct {
	Expected   int      // tagged lines of accepted commits
	Found      int      // tagged lines in the notebook
	Lost       []string // accepted lines missing
	Duplicated []string // tagged lines present more than once
	Unknown    []string // tagged lines no writer wrote (corruption)
}

// OK reports whether nothing was lost, duplicated or invented.
func (c LineCheck) OK() bool {
	return len(c.Lost) == 0 && len(c.Duplicated) == 0 && len(c.Unknown) == 0
}

// checkLines audits tree (path -> content). accepted lines must appear
// exactly once; written lines (a superset: lines of commits that were not
// accepted may or may not be there) must not appear twice; any other tagged
// line is unknown.
func checkLines(tree map[string][]byte, accepted, written []string) LineCheck {
	counts := map[string]int{}
	var order []string
	for _, p := range slices.Sorted(maps.Keys(tree)) {
		for _, l := range strings.Split(string(tree[p]), "\n") {
			l = strings.TrimSuffix(l, "\r")
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
	for _, l := range written {
		known[l] = true
	}
	for _, l := range accepted {
		known[l] = true
	}
	c := LineCheck{Expected: len(accepted)}
	for _, l := range accepted {
		if counts[l] == 0 {
			c.Lost = append(c.Lost, l)
		}
	}
	for _, l := range order {
		c.Found += counts[l]
		if counts[l] > 1 {
			c.Duplicated = append(c.Duplicated, l)
		}
		if !known[l] {
			c.Unknown = append(c.Unknown, l)
		}
	}
	return c
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
