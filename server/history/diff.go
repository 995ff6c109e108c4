package history

import (
	"path"
	"sort"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// Change is one file that differs between two trees, with its line delta
// and, when asked for, both versions (Old is nil when the file was added,
// New when it was removed).
type Change struct {
	Path                  string
	Insertions, Deletions int
	Added, Removed        bool
	Old, New              []byte
}

// pathChange is one path whose file ID differs (zero: absent).
type pathChange struct {
	path     string
	old, new cas.ID
}

// diffTrees appends the files that differ between trees a and b (zero:
// empty) below dir, descending only into subtrees whose IDs differ and
// that can hold a path under filter.
func diffTrees(src cas.Source, a, b cas.ID, dir, filter string, out *[]pathChange) error {
	if a == b {
		return nil
	}
	ea, err := treeEntries(src, a)
	if err != nil {
		return err
	}
	eb, err := treeEntries(src, b)
	if err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var x, y *cas.TreeEntry
		switch {
		case j >= len(eb) || (i < len(ea) && ea[i].Name < eb[j].Name):
			x = &ea[i]
			i++
		case i >= len(ea) || eb[j].Name < ea[i].Name:
			y = &eb[j]
			j++
		default:
			x, y = &ea[i], &eb[j]
			i, j = i+1, j+1
		}
		name := x
		if name == nil {
			name = y
		}
		p := path.Join(dir, name.Name)
		if dir == "" {
			p = name.Name
		}
		if !mayHold(p, filter) {
			continue
		}
		if x != nil && y != nil && x.Kind == y.Kind && x.ID == y.ID {
			continue
		}
		var ta, tb, fa, fb cas.ID
		for _, side := range []struct {
			e        *cas.TreeEntry
			tree, fl *cas.ID
		}{{x, &ta, &fa}, {y, &tb, &fb}} {
			switch {
			case side.e == nil:
			case side.e.Kind == cas.KindTree:
				*side.tree = side.e.ID
			default:
				*side.fl = side.e.ID
			}
		}
		if (!fa.IsZero() || !fb.IsZero()) && fa != fb && matches(p, filter) {
			*out = append(*out, pathChange{path: p, old: fa, new: fb})
		}
		if !ta.IsZero() || !tb.IsZero() {
			if err := diffTrees(src, ta, tb, p, filter, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func treeEntries(src cas.Source, id cas.ID) ([]cas.TreeEntry, error) {
	if id.IsZero() {
		return nil, nil
	}
	o, err := src.Get(id)
	if err != nil {
		return nil, err
	}
	return cas.DecodeTree(o)
}

// matches reports whether file p is filter or below it ("" matches all).
func matches(p, filter string) bool {
	return filter == "" || p == filter || strings.HasPrefix(p, filter+"/")
}

// mayHold reports whether p (a file or a directory) can be or hold a path
// that matches filter.
func mayHold(p, filter string) bool {
	return matches(p, filter) || strings.HasPrefix(filter, p+"/")
}

// fileChanges turns path changes into Changes sorted by path, with
// the diffstat (and the contents when asked).
func fileChanges(paths []pathChange, filter string, content bool, read func(cas.ID) ([]byte, error)) ([]Change, error) {
	sort.Slice(paths, func(i, j int) bool { return paths[i].path < paths[j].path })
	out := make([]Change, 0, len(paths))
	for _, pc := range paths {
		if !matches(pc.path, filter) {
			continue
		}
		fc := Change{Path: pc.path, Added: pc.old.IsZero(), Removed: pc.new.IsZero()}
		var err error
		if !fc.Added {
			if fc.Old, err = read(pc.old); err != nil {
				return nil, err
			}
			fc.Old = orEmpty(fc.Old)
		}
		if !fc.Removed {
			if fc.New, err = read(pc.new); err != nil {
				return nil, err
			}
			fc.New = orEmpty(fc.New)
		}
		fc.Insertions, fc.Deletions = merge.Stat(fc.Old, fc.New)
		if !content {
			fc.Old, fc.New = nil, nil
		}
		out = append(out, fc)
	}
	return out, nil
}

// Compare returns the files that differ from base to files under filter,
// sorted by path, with both versions read through read: a directory's
// baseline against what is on disk.
func Compare(base, files map[string]cas.ID, filter string, read func(cas.ID) ([]byte, error)) ([]Change, error) {
	var paths []pathChange
	for p, id := range files {
		if old, ok := base[p]; (!ok || old != id) && matches(p, filter) {
			paths = append(paths, pathChange{path: p, old: old, new: id})
		}
	}
	for p, id := range base {
		if _, ok := files[p]; !ok && matches(p, filter) {
			paths = append(paths, pathChange{path: p, old: id})
		}
	}
	return fileChanges(paths, filter, true, read)
}

// NormalizePath checks a notebook-relative path argument (a file or a
// directory) and returns it in slash form without "./" or a trailing
// slash; "" and "." mean the whole notebook. Errors are *ArgumentError.
func NormalizePath(p string) (string, error) {
	p = strings.ReplaceAll(p, "\\", "/")
	if strings.HasPrefix(p, "/") || len(p) > workdir.MaxPathBytes || strings.ContainsRune(p, 0) {
		return "", &ArgumentError{Msg: "A path must be relative to the notebook, at most 4,096 bytes."}
	}
	c := path.Clean("/" + p)[1:]
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", &ArgumentError{Msg: "A path must stay inside the notebook (no \"..\")."}
		}
	}
	return c, nil
}

// orEmpty keeps "absent" and "empty" apart in a Change: a present empty
// file is a non-nil empty slice, an absent side nil (Added, Removed).
func orEmpty(c []byte) []byte {
	if c == nil {
		return []byte{}
	}
	return c
}
