package server

// Restore and revert write an older state into L as a local edit: the
// person reviews it and commits it as usual, so it goes through the
// ordinary merge and never rewrites history. Both take the directory's
// locks, resynchronise first after an interrupted operation, and rewrite L
// through the same plan/materialise steps as pull (recovery flag, atomic
// writes, directories fsynced); the baseline is left as it was, so status,
// diff and commit see the result as local changes.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
)

// Restore writes the content of generation gen into the directory for the
// given notebook-relative paths (files or directories; none: the whole
// notebook): files re-created or rewritten as they were, files absent at
// gen removed. Other files are untouched. The result's files are the
// changes made to the directory; Generation is gen. Errors are *Error.
func (e *Engine) Restore(ctx context.Context, dir string, gen uint64, paths []string) (*Result, error) {
	filters := make([]string, 0, len(paths))
	for _, p := range paths {
		f, err := NormalizePath(p)
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
	}
	return withHealing(e, func() (*Result, error) { return e.restore(ctx, dir, gen, filters) })
}

func (e *Engine) restore(ctx context.Context, dir string, gen uint64, filters []string) (*Result, error) {
	s, h, err := e.beginLocalEdit(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer s.end()
	g, head, err := h.headAt(gen)
	if err != nil {
		return nil, err
	}
	then, err := treeOf(h.src, head)
	if err != nil {
		return nil, e.fail("read tree", err)
	}
	selected := func(p string) bool {
		if len(filters) == 0 {
			return true
		}
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
		if !anyMatch(then, f) && !anyMatch(s.scan.files, f) {
			return nil, invalidRequest(ReasonInvalidArgument, fmt.Sprintf("%q names no file at generation %d nor in the directory.", f, g))
		}
	}
	target := &merged{ids: make(map[string]cas.ID, len(s.scan.files))}
	for p, id := range s.scan.files {
		if !selected(p) {
			target.ids[p] = id
		}
	}
	for p, id := range then {
		if selected(p) {
			target.ids[p] = id
		}
	}
	if file, dir, ok := fileUnderFile(target.ids); ok {
		return nil, invalidRequest(ReasonInvalidArgument, fmt.Sprintf("Restoring %q needs a directory where the file %q is; restore %q too, or move it.", file, dir, dir))
	}
	changes, err := s.plan(target)
	if err != nil {
		return nil, e.fail("plan restore", err)
	}
	if err := s.materialise(changes, recoveryFlag{Op: "restore", RemoteAccepted: "no", Generation: s.base.Generation}, s.base, nil); err != nil {
		return nil, err
	}
	return &Result{Path: s.dir, Generation: g, Files: diffstat(changes)}, nil
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

// Revert applies the inverse of publication gen to the directory by a
// three-way merge: base = the tree gen published, local = the directory,
// remote = the tree before gen. Later work (by others, or local edits)
// is kept; where it overlaps what gen changed, conflict blocks are written
// and CONTENT_CONFLICT/MERGE_CONFLICT is returned, as a pull does. The
// directory must have been pulled at or after gen. The result's files are
// the changes made to the directory; Generation is gen.
func (e *Engine) Revert(ctx context.Context, dir string, gen uint64) (*Result, error) {
	return withHealing(e, func() (*Result, error) { return e.revert(ctx, dir, gen) })
}

func (e *Engine) revert(ctx context.Context, dir string, gen uint64) (*Result, error) {
	s, h, err := e.beginLocalEdit(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer s.end()
	p, ok, err := h.publicationAt(gen)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalidRequest(ReasonInvalidArgument, fmt.Sprintf("Generation %d published nothing (a checkpoint of the store); there is nothing to revert.", gen))
	}
	if s.base.Generation < p.Generation {
		// Committing a revert of changes L never had would meet them
		// again in the merge with the accepted notebook and keep them.
		return nil, invalidRequest(ReasonNotPulled, fmt.Sprintf("The directory was last pulled at generation %d, before generation %d: pull it, then revert.", s.base.Generation, p.Generation))
	}
	published, err := treeOf(h.src, p.Head)
	if err != nil {
		return nil, e.fail("read tree", err)
	}
	before, err := treeOf(h.src, p.Parent)
	if err != nil {
		return nil, e.fail("read tree", err)
	}
	tr, err := merge.Trees(published, s.scan.files, before, s.load)
	if err != nil {
		return nil, e.fail("merge", err)
	}
	m := &merged{ids: make(map[string]cas.ID, len(tr.Files)), contents: map[string][]byte{}, conflicts: tr.Conflicts}
	for path, ent := range tr.Files {
		id := ent.ID
		if id.IsZero() {
			if id, err = cas.WriteFile(nil, ent.Content); err != nil {
				return nil, e.fail("merge", err)
			}
			m.contents[path] = ent.Content
		}
		m.ids[path] = id
	}
	changes, err := s.plan(m)
	if err != nil {
		return nil, e.fail("plan revert", err)
	}
	if err := s.materialise(changes, recoveryFlag{Op: "revert", RemoteAccepted: "no", Generation: s.base.Generation}, s.base, nil); err != nil {
		return nil, err
	}
	if len(m.conflicts) > 0 {
		return nil, conflictError(m.conflicts)
	}
	return &Result{Path: s.dir, Generation: p.Generation, Files: diffstat(changes)}, nil
}

// beginLocalEdit starts a restore or revert: the directory's session
// (pulled, present, resynchronised after an interrupted operation, and
// scanned) and the retained history, whose object cache the session
// reads through.
func (e *Engine) beginLocalEdit(ctx context.Context, dir string) (*session, *historyView, error) {
	s, err := e.begin(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.end()
		}
	}()
	if s.base == nil {
		return nil, nil, invalidRequest(ReasonNotPulled, "This directory has not been pulled yet; pull it first.")
	}
	if err := s.open(false); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, invalidRequest(ReasonPathNotDirectory, "The directory does not exist.")
		}
		return nil, nil, err
	}
	if err := s.recoverFirst(); err != nil {
		return nil, nil, err
	}
	if s.scan == nil {
		if _, err := s.scanL(); err != nil {
			return nil, nil, err
		}
	}
	h, err := e.openHistory(ctx)
	if err != nil {
		return nil, nil, err
	}
	s.src = h.src
	ok = true
	return s, h, nil
}
