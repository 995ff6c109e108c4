package server

// Restore and revert write an older state into L as a local edit: the
// person reviews it and commits it as usual, so it goes through the
// ordinary merge and never rewrites history (L8 of docs/local-state.md:
// history commands never destroy work). Both take the directory's
// locks, resynchronise first after an interrupted operation, and rewrite L
// through the same plan/materialise steps as pull (recovery flag, atomic
// writes, directories fsynced); the baseline is left as it was, so status,
// diff and commit see the result as local changes. Neither ever replaces
// work no publication holds: a file they would overwrite or delete that
// differs from the baseline, or is not in it, is refused by name, or with
// Force copied into P first (keepUncommitted).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/history"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/pull"
)

// HistoryWrite are the options of Restore and Revert.
type HistoryWrite struct {
	// Force replaces files that hold uncommitted work, after keeping a
	// copy of each in the directory's private state (LocalEditResult.Saved).
	Force bool
}

// LocalEditResult is what Restore or Revert did to the directory.
type LocalEditResult struct {
	Result
	// Saved is the directory holding the copies Force kept ("" when none
	// was needed); SavedFiles their paths, relative to the notebook and
	// to Saved alike.
	Saved      string
	SavedFiles []string
}

// Restore writes the content of generation gen into the directory for the
// given paths (files or directories, relative to dir; none: all of dir,
// which may be a subdirectory of a notebook directory): files re-created
// or rewritten as they were, files absent at gen removed. Other files are
// untouched. A file the restore would overwrite or delete that holds
// uncommitted work is refused (UNCOMMITTED_CHANGES) unless opts.Force.
// The result's files are the changes made to the directory; Generation is
// gen. Errors are *Error.
func (e *Engine) Restore(ctx context.Context, dir string, gen uint64, paths []string, opts HistoryWrite) (*LocalEditResult, error) {
	filters, err := history.RestorePaths(paths)
	if err != nil {
		return nil, e.historyErr("restore", err)
	}
	return withHealing(e, func() (*LocalEditResult, error) { return e.restore(ctx, dir, gen, filters, opts) })
}

func (e *Engine) restore(ctx context.Context, dir string, gen uint64, filters []string, opts HistoryWrite) (*LocalEditResult, error) {
	s, h, err := e.beginLocalEdit(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer s.End()
	sub, err := s.subdir(dir)
	if err != nil {
		return nil, err
	}
	t, err := h.Restore(gen, s.Scan.Files, sub, filters)
	if err != nil {
		return nil, e.historyErr("restore", err)
	}
	target := &plan.Merged{IDs: t.IDs}
	changes, err := s.Plan(target)
	if err != nil {
		return nil, e.env.Fail("plan restore", err)
	}
	res := &LocalEditResult{Result: Result{Path: s.Dir, Generation: t.Generation}}
	if err := s.keepUncommitted(changes, opts, "restore", res); err != nil {
		return nil, err
	}
	if err := pull.Materialise(s.Call, changes, pstate.RecoveryFlag{Op: "restore", RemoteAccepted: "no", Generation: s.Base.Generation}, s.Base, false); err != nil {
		return nil, err
	}
	res.Files = dircall.Diffstat(changes)
	return res, nil
}

// subdir returns where the requested directory lies in the notebook
// directory the session runs on ("" when it is that directory): a history
// command given a subdirectory acts on it only.
func (s *session) subdir(requested string) (string, error) {
	req, err := s.e.ResolveDir(requested)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(s.Dir, req)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", diag.InvalidRequest(diag.ReasonInvalidArgument, "The directory is not inside the notebook directory.")
	}
	if rel == "." {
		return "", nil
	}
	return filepath.ToSlash(rel), nil
}

// keepUncommitted checks the files changes would overwrite or delete: one
// that holds work the baseline does not (edited since the last pull or
// commit, or never committed) is refused with UNCOMMITTED_CHANGES naming
// every such file, nothing written; with opts.Force a copy of each is made
// durable first under the directory's private state, P/dirs/<h>/saved/
// <time>/<path>, and named in res. Re-creating a file L does not hold
// destroys nothing and is never refused.
func (s *session) keepUncommitted(changes []plan.Change, opts HistoryWrite, op string, res *LocalEditResult) error {
	base := s.BaseFiles()
	var risky []diag.FileError
	var keep []plan.Change
	for _, c := range changes {
		cur, inL := s.Scan.Files[c.Path]
		if !inL {
			continue
		}
		old, committed := base[c.Path]
		switch {
		case !committed:
			risky = append(risky, diag.FileError{Path: c.Path, Reason: diag.FileNeverCommitted})
		case old != cur:
			risky = append(risky, diag.FileError{Path: c.Path, Reason: diag.FileLocalEdit})
		default:
			continue
		}
		keep = append(keep, c)
	}
	if len(risky) == 0 {
		return nil
	}
	if !opts.Force {
		err := diag.InvalidRequest(diag.ReasonUncommittedChanges, fmt.Sprintf("The %s would overwrite or delete %d %s holding uncommitted work; nothing was changed. Commit %s first, move %s away, or repeat with --force to keep a copy of each in the private state and go ahead.",
			op, len(risky), plural(len(risky), "file", "files"), plural(len(risky), "it", "them"), plural(len(risky), "it", "them")))
		err.Files = risky
		return err
	}
	saved, err := s.saveCopies(keep)
	if err != nil {
		return s.e.env.Fail("keep copies", err)
	}
	res.Saved = saved
	for _, c := range keep {
		res.SavedFiles = append(res.SavedFiles, c.Path)
	}
	return nil
}

// saveCopies writes the current content of each change's file under a new
// directory of P/dirs/<h>/saved, durably, and returns that directory.
func (s *session) saveCopies(files []plan.Change) (string, error) {
	root := filepath.Join(s.State.Path, "saved")
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	dir := filepath.Join(root, stamp)
	for i := 2; ; i++ { // two commands in one nanosecond: keep both
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dir = filepath.Join(root, fmt.Sprintf("%s-%d", stamp, i))
	}
	synced := map[string]bool{}
	for _, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(c.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", err
		}
		if err := osfile.WriteFile(p, 0o600, true, c.Old); err != nil {
			return "", err
		}
		synced[filepath.Dir(p)] = true
	}
	// The copies must outlive a crash right after the rewrite that
	// replaces the originals: every directory down to them is synced.
	for d := range synced {
		for ; d != s.State.Path && len(d) > len(s.State.Path); d = filepath.Dir(d) {
			if err := osfile.SyncDir(d); err != nil {
				return "", err
			}
		}
	}
	return dir, osfile.SyncDir(s.State.Path)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Revert applies the inverse of publication gen to the directory by a
// three-way merge: base = the tree gen published, local = the directory,
// remote = the tree before gen. Later work (by others, or local edits)
// is kept; where it overlaps what gen changed, conflict blocks are written
// and CONTENT_CONFLICT/MERGE_CONFLICT is returned, as a pull does. Given a
// subdirectory of a notebook directory, only the files below it change. A
// file the revert would rewrite or delete that holds uncommitted work is
// refused (UNCOMMITTED_CHANGES) unless opts.Force. The directory must have
// been pulled at or after gen. The result's files are the changes made to
// the directory; Generation is gen. With CONTENT_CONFLICT the result is
// returned too (the blocks are written, and copies may have been kept).
func (e *Engine) Revert(ctx context.Context, dir string, gen uint64, opts HistoryWrite) (*LocalEditResult, error) {
	return withHealing(e, func() (*LocalEditResult, error) { return e.revert(ctx, dir, gen, opts) })
}

func (e *Engine) revert(ctx context.Context, dir string, gen uint64, opts HistoryWrite) (*LocalEditResult, error) {
	s, h, err := e.beginLocalEdit(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer s.End()
	sub, err := s.subdir(dir)
	if err != nil {
		return nil, err
	}
	p, err := h.Revertible(gen)
	if err != nil {
		return nil, e.historyErr("revert", err)
	}
	if s.Base.Generation < p.Generation {
		// Committing a revert of changes L never had would meet them
		// again in the merge with the accepted notebook and keep them.
		return nil, diag.InvalidRequest(diag.ReasonNotPulled, fmt.Sprintf("The directory was last pulled at generation %d, before generation %d: pull it, then revert.", s.Base.Generation, p.Generation))
	}
	t, err := h.Revert(p, s.Scan.Files, sub, s.Load)
	if err != nil {
		return nil, e.historyErr("revert", err)
	}
	m := &plan.Merged{IDs: t.IDs, Contents: t.Contents, Conflicts: t.Conflicts}
	changes, err := s.Plan(m)
	if err != nil {
		return nil, e.env.Fail("plan revert", err)
	}
	res := &LocalEditResult{Result: Result{Path: s.Dir, Generation: p.Generation}}
	if err := s.keepUncommitted(changes, opts, "revert", res); err != nil {
		return nil, err
	}
	if err := pull.Materialise(s.Call, changes, pstate.RecoveryFlag{Op: "revert", RemoteAccepted: "no", Generation: s.Base.Generation}, s.Base, false); err != nil {
		return nil, err
	}
	res.Files = dircall.Diffstat(changes)
	if len(m.Conflicts) > 0 {
		// The result too: it says where --force kept copies.
		return res, pull.ConflictError(m.Conflicts)
	}
	return res, nil
}

// beginLocalEdit starts a restore or revert: the directory's session
// (pulled, present, resynchronised after an interrupted operation, and
// scanned) and the retained history, whose object cache the session
// reads through.
func (e *Engine) beginLocalEdit(ctx context.Context, dir string) (*session, *history.View, error) {
	s, err := e.begin(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.End()
		}
	}()
	if s.Base == nil {
		return nil, nil, diag.InvalidRequest(diag.ReasonNotPulled, "This directory has not been pulled yet; pull it first.")
	}
	if err := s.OpenL(false); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, diag.InvalidRequest(diag.ReasonPathNotDirectory, "The directory does not exist.")
		}
		return nil, nil, err
	}
	if err := pull.RecoverFirst(s.Call); err != nil {
		return nil, nil, err
	}
	if s.Scan == nil {
		if _, err := s.ScanL(); err != nil {
			return nil, nil, err
		}
	}
	h, src, err := e.openHistoryAt(ctx)
	if err != nil {
		return nil, nil, err
	}
	s.Src = src
	ok = true
	return s, h, nil
}
