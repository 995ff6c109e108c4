package history

import (
	"path"

	"github.com/slivingdoc/slivingdoc/cas"
)

// RestoreTarget returns what a directory holds after a restore: the files
// now holds, with those under filters (normalised notebook paths; "" is
// the whole notebook) as then, the tree at generation g, holds them (a
// file absent at g is removed). A filter that names no file at g nor now,
// and a result that would need a directory where a file is, are
// *ArgumentError.
func RestoreTarget(now, then map[string]cas.ID, filters []string, g uint64) (map[string]cas.ID, error) {
	selected := func(p string) bool {
		for _, f := range filters {
			if matches(p, f) {
				return true
			}
		}
		return false
	}
	for _, f := range filters {
		if f == "" {
			continue
		}
		if !anyMatch(then, f) && !anyMatch(now, f) {
			return nil, argument("%q names no file at generation %d nor in the directory.", f, g)
		}
	}
	ids := make(map[string]cas.ID, len(now))
	for p, id := range now {
		if !selected(p) {
			ids[p] = id
		}
	}
	for p, id := range then {
		if selected(p) {
			ids[p] = id
		}
	}
	if file, dir, ok := fileUnderFile(ids); ok {
		return nil, argument("Restoring %q needs a directory where the file %q is; restore %q too, or move it.", file, dir, dir)
	}
	return ids, nil
}

// fileUnderFile finds a path of ids below another path of ids that is a
// file (a restore of some paths only can ask for that; nothing can write it).
func fileUnderFile(ids map[string]cas.ID) (file, dir string, found bool) {
	for p := range ids {
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			if _, ok := ids[d]; ok {
				return p, d, true
			}
		}
	}
	return "", "", false
}

func anyMatch(files map[string]cas.ID, f string) bool {
	for p := range files {
		if matches(p, f) {
			return true
		}
	}
	return false
}
