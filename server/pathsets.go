package server

import (
	"fmt"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"path"
	"sort"
	"strings"
)

// pathSets holds the writable and read-only sets, normalised to
// notebook-relative slash paths ("." is the whole notebook).
type pathSets struct {
	writable []string
	readOnly []string
}

func newPathSets(writable, readOnly []string) (pathSets, error) {
	w, err := normaliseSet("writable", writable)
	if err != nil {
		return pathSets{}, err
	}
	r, err := normaliseSet("read-only", readOnly)
	if err != nil {
		return pathSets{}, err
	}
	for _, p := range w {
		if i := sort.SearchStrings(r, p); i < len(r) && r[i] == p {
			return pathSets{}, fmt.Errorf("server: %q is in both the writable and the read-only set", p)
		}
	}
	return pathSets{writable: w, readOnly: r}, nil
}

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

func (s pathSets) empty() bool { return len(s.writable) == 0 && len(s.readOnly) == 0 }

// refusal returns the READ_ONLY_PATH file reason for changing p, or "" when
// the change is allowed. The longest matching entry of either set decides;
// with a writable set, a path no entry matches is outside it.
func (s pathSets) refusal(p string) string {
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
		return ""
	case best >= 0:
		return diag.ReasonInsideReadOnly
	case len(s.writable) > 0:
		return diag.ReasonOutsideWritable
	}
	return ""
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
