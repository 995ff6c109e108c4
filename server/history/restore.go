package history

// What a restore or a revert makes of a directory's files, computed from
// the retained history and the files the directory holds now; the engine
// plans and writes it (and keeps uncommitted work) itself.

import (
	"fmt"
	"path"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
)

// Target is what a restore or a revert makes of the notebook directory's
// files: every file by ID, the content of those a merge wrote (which no
// store holds yet; nil for a restore), and a revert's conflicts.
type Target struct {
	Generation uint64 // the generation restored, or the publication reverted
	IDs        map[string]cas.ID
	Contents   map[string][]byte
	Conflicts  []merge.Conflict
}

// RestorePaths checks and normalises the paths a restore names (files or
// directories, relative to the restored directory). An empty one is an
// *ArgumentError: most often an unset shell variable, it must not mean
// "everything".
func RestorePaths(paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p == "" {
			return nil, &ArgumentError{Msg: "An empty path names no file; to restore the whole directory, name no path."}
		}
		f, err := NormalizePath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// Restore returns the directory's files after a restore of generation gen
// (Latest: the accepted head): now, the notebook directory's files, with
// those under paths (as RestorePaths returns them, relative to sub, the
// restored subdirectory of the notebook directory, "" for all of it;
// none: all of sub) as the tree at gen holds them (a file absent there is
// removed). A path that names no file at gen nor now, and a result that
// would need a directory where a file is, are *ArgumentError.
func (h *View) Restore(gen uint64, now map[string]cas.ID, sub string, paths []string) (*Target, error) {
	filters := []string{sub}
	if len(paths) > 0 {
		filters = make([]string, len(paths))
		for i, p := range paths {
			filters[i] = joinRel(sub, p)
		}
	}
	g, head, err := h.HeadAt(gen)
	if err != nil {
		return nil, err
	}
	then, err := h.Files(head)
	if err != nil {
		return nil, fail("read tree", err)
	}
	ids, err := restoreTarget(now, then, filters, g)
	if err != nil {
		return nil, err
	}
	return &Target{Generation: g, IDs: ids}, nil
}

// joinRel joins notebook-relative paths ("" is the notebook itself).
func joinRel(dir, p string) string {
	switch {
	case dir == "":
		return p
	case p == "":
		return dir
	}
	return dir + "/" + p
}

// restoreTarget returns what a directory holds after a restore: the files
// now holds, with those under filters (normalised notebook paths; "" is
// the whole notebook) as then, the tree at generation g, holds them (a
// file absent at g is removed). A filter that names no file at g nor now,
// and a result that would need a directory where a file is, are
// *ArgumentError.
func restoreTarget(now, then map[string]cas.ID, filters []string, g uint64) (map[string]cas.ID, error) {
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

// Revertible returns the publication accepted at generation gen, which a
// revert inverts; a retained generation that published nothing (a
// checkpoint of the store) is an *ArgumentError.
func (h *View) Revertible(gen uint64) (Publication, error) {
	p, ok, err := h.PublicationAt(gen)
	if err != nil {
		return Publication{}, err
	}
	if !ok {
		return Publication{}, &ArgumentError{Msg: fmt.Sprintf("Generation %d published nothing (a checkpoint of the store); there is nothing to revert.", gen)}
	}
	return p, nil
}

// Revert returns the directory's files after the inverse of publication p
// is applied to them by a three-way merge: base = the tree p published,
// local = now (the notebook directory's files, read through load), remote
// = the tree before p. Later work is kept; where it overlaps what p
// changed, the merge's conflicts are in the Target. Only the files under
// sub (the reverted subdirectory, "" for all) change; the others stay as
// now holds them.
func (h *View) Revert(p Publication, now map[string]cas.ID, sub string, load merge.Loader) (*Target, error) {
	published, err := h.Files(p.Head)
	if err != nil {
		return nil, fail("read tree", err)
	}
	before, err := h.Files(p.Parent)
	if err != nil {
		return nil, fail("read tree", err)
	}
	tr, err := merge.Trees(published, now, before, load)
	if err != nil {
		return nil, fail("merge", err)
	}
	t := &Target{Generation: p.Generation, IDs: make(map[string]cas.ID, len(tr.Files)), Contents: map[string][]byte{}}
	for _, c := range tr.Conflicts {
		if matches(c.Path, sub) {
			t.Conflicts = append(t.Conflicts, c)
		}
	}
	for path, ent := range tr.Files {
		if !matches(path, sub) {
			continue
		}
		id := ent.ID
		if id.IsZero() {
			if id, err = cas.WriteFile(nil, ent.Content); err != nil {
				return nil, fail("merge", err)
			}
			t.Contents[path] = ent.Content
		}
		t.IDs[path] = id
	}
	for path, id := range now { // outside the subdirectory: as it is
		if !matches(path, sub) {
			t.IDs[path] = id
		}
	}
	return t, nil
}
