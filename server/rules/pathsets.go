package rules

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Sets holds the writable and read-only sets, normalised to
// notebook-relative slash paths ("." is the whole notebook).
type Sets struct {
	writable []string
	readOnly []string
}

// Refusal is why a change of a path is not allowed.
type Refusal int

// The answers of Sets.Check.
const (
	Allowed         Refusal = iota
	InsideReadOnly          // an entry of the read-only set covers the path
	OutsideWritable         // a writable set is given and no entry covers it
)

// NewSets normalises the two sets; an entry that is empty, absolute,
// leaves the notebook or is in both sets is refused.
func NewSets(writable, readOnly []string) (Sets, error) {
	w, err := normaliseSet("writable", writable)
	if err != nil {
		return Sets{}, err
	}
	r, err := normaliseSet("read-only", readOnly)
	if err != nil {
		return Sets{}, err
	}
	for _, p := range w {
		if i := sort.SearchStrings(r, p); i < len(r) && r[i] == p {
			return Sets{}, fmt.Errorf("server: %q is in both the writable and the read-only set", p)
		}
	}
	return Sets{writable: w, readOnly: r}, nil
}

// The errors keep the "server:" prefix the engine's configuration errors
// have always had: the CLI prints them as they are.
func normaliseSet(name string, entries []string) ([]string, error) {
	seen := map[string]bool{}
	out := []string{}
	for _, raw := range entries {
		p := strings.ReplaceAll(strings.TrimSpace(raw), `\`, "/")
		if p == "" {
			return nil, fmt.Errorf("server: empty %s entry", name)
		}
		if strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("server: %s entry %q must be relative to the notebook", name, raw)
		}
		p = path.Clean(p)
		if p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("server: %s entry %q leaves the notebook", name, raw)
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Empty reports whether neither set has an entry: every change is allowed.
func (s Sets) Empty() bool { return len(s.writable) == 0 && len(s.readOnly) == 0 }

// Entries returns copies of the normalised, sorted sets.
func (s Sets) Entries() (writable, readOnly []string) {
	return append([]string{}, s.writable...), append([]string{}, s.readOnly...)
}

// Check returns why changing p is refused, or Allowed. The longest
// matching entry of either set decides; with a writable set, a path no
// entry matches is outside it.
func (s Sets) Check(p string) Refusal {
	best, bestWritable := -1, false
	for _, e := range s.writable {
		if n := matchLen(e, p); n > best {
			best, bestWritable = n, true
		}
	}
	for _, e := range s.readOnly {
		if n := matchLen(e, p); n > best {
			best, bestWritable = n, false
		}
	}
	switch {
	case best >= 0 && bestWritable:
		return Allowed
	case best >= 0:
		return InsideReadOnly
	case len(s.writable) > 0:
		return OutsideWritable
	}
	return Allowed
}

// matchLen is the length of entry e when it covers path p (p itself or a
// path below it), else -1. "." covers everything with length 0.
func matchLen(e, p string) int {
	if e == "." {
		return 0
	}
	if p == e || strings.HasPrefix(p, e+"/") {
		return len(e)
	}
	return -1
}
