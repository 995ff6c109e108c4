package rules

import (
	"os"
	"path/filepath"
	"sort"
)

// Nested notebook directories. A notebook directory's scan takes in every
// directory below it, so a second notebook directory of the same store
// inside it would hold a second copy of the notebook that the outer one
// then publishes (notes/notes/…). So a request path at or below an
// existing notebook directory of the store addresses that directory, the
// outermost if several (Outermost), and a path that would become a new
// notebook directory containing an existing one is refused (Contained
// names the one it would contain). Which directories are the store's
// notebook directories is the engine's to say: it keeps their records.

// Outermost returns the outermost of dir and the directories above it
// that isNotebook reports, or "" if none. The walk stops at top, or at
// the file system's root when top is "".
func Outermost(dir, top string, isNotebook func(dir string) bool) string {
	outer := ""
	for cur := dir; top == "" || Within(top, cur); cur = filepath.Dir(cur) {
		if isNotebook(cur) {
			outer = cur
		}
		if (top != "" && cur == top) || filepath.Dir(cur) == cur {
			break
		}
	}
	return outer
}

// Contained returns the first, in sorted order, of the notebook
// directories notebooks (real paths) that is strictly below dir's real
// path and still exists, relative to dir in slash form; "" if none. A
// directory that is gone no longer holds a copy.
func Contained(dir string, notebooks []string) string {
	real := RealPath(dir)
	var found []string
	for _, nb := range notebooks {
		if nb == real || !Within(real, nb) {
			continue
		}
		if _, err := os.Stat(nb); err != nil {
			continue
		}
		rel, err := filepath.Rel(real, nb)
		if err == nil {
			found = append(found, filepath.ToSlash(rel))
		}
	}
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	return found[0]
}
