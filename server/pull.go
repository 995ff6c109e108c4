package server

import (
	"context"
	"errors"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// Pull writes the merge of baseline, visible directory and accepted state
// into the directory and records the accepted state. Pull never publishes.
// Overlapping changes leave conflict blocks in the files and return
// CONTENT_CONFLICT/MERGE_CONFLICT (with the new state recorded). Errors
// are *Error.
func (e *Engine) Pull(ctx context.Context, path string) (*Result, error) {
	return withHealing(e, func() (*Result, error) { return e.pull(ctx, path, false) })
}

// PullImplied is Pull for a directory the caller did not name (the CLI's
// working directory): one that holds files but has no record here is
// refused (INVALID_REQUEST / DIRECTORY_NOT_EMPTY) instead of adopted,
// since nobody asked for those files to meet the notebook.
func (e *Engine) PullImplied(ctx context.Context, path string) (*Result, error) {
	return withHealing(e, func() (*Result, error) { return e.pull(ctx, path, true) })
}

func (e *Engine) pull(ctx context.Context, path string, implied bool) (*Result, error) {
	s, err := e.begin(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.end()
	if err := s.OpenL(true); err != nil {
		return nil, err
	}
	if implied && s.Base == nil && !s.EmptyL() {
		return nil, diag.InvalidRequest(diag.ReasonDirectoryNotEmpty, "")
	}
	// Before the baseline moves on and the record with it (pull_v4.go).
	if err := s.settleV4(); err != nil {
		return nil, err
	}
	res, conflicts, err := s.pull("pull")
	if err != nil {
		return nil, err
	}
	if len(conflicts) > 0 {
		return nil, conflictError(conflicts)
	}
	return res, nil
}

// pull is the synchronisation shared by Pull and by recovery: scan L, read
// `current`, merge(A, L, R), rewrite L, record R as the baseline.
func (s *session) pull(op string) (*Result, []merge.Conflict, error) {
	if _, err := s.ScanL(); err != nil {
		return nil, nil, err
	}
	state, err := s.Env.Notebook.ReadCurrent(s.Ctx)
	if err != nil {
		return nil, nil, s.e.fail("read current", err)
	}
	res, conflicts, err := s.syncTo(op, state)
	var de *diag.Error
	if errors.As(err, &de) && de.Reason == diag.ReasonMissingPack {
		// A cleanup after a newer checkpoint removed a pack the manifest
		// just read named (nothing was rewritten yet): the newer
		// `current` no longer needs it (server/objcache, remote/cleanup.go).
		if again, rerr := s.Env.Notebook.ReadCurrent(s.Ctx); rerr == nil && again.Generation() > state.Generation() {
			return s.syncTo(op, again)
		}
	}
	return res, conflicts, err
}

// syncTo merges R = state into L against A and records it. The scan of L
// must be current. An interrupted rewrite is settled first (once the chain
// can be read, since telling an edited file's version may need contents).
func (s *session) syncTo(op string, state remote.State) (*Result, []merge.Conflict, error) {
	// A record of another store, or newer than the store (restored from a
	// backup), is no record: the directory is adopted (remembered.go).
	s.DropOutlivedRecord(state)
	flag, err := s.State.LoadRecovery()
	if err != nil {
		return nil, nil, s.e.fail("load recovery flag", err)
	}
	res := &Result{Path: s.Dir, Generation: state.Generation(), Files: []FileStat{}}
	if s.Base == nil && len(s.Scan.Files) > 0 {
		// No record (never pulled here, copied, or P cleared): no file
		// of L has a known base (server/plan).
		var paths []string
		for p := range s.Scan.Files {
			if !s.Scan.Virtual[p] {
				paths = append(paths, p)
			}
		}
		s.Base = s.Base.WithUnknown(paths)
	}
	s.Base = s.Base.WithUnknown(s.Scan.Unknown)
	if flag == nil {
		s.Base = s.Pending.Adopt(s.Ctx, s.Env.Notebook, s.Base, state)
		if s.Base != nil && state.Head() == s.Base.Head && s.Base.Exact() && len(s.Scan.Temps) == 0 && len(s.Scan.Restore) == 0 {
			// R == A: the merge is L itself; nothing to fetch or rewrite.
			if s.Base.Generation != state.Generation() {
				s.Base.Generation = state.Generation()
				if err := s.State.SaveBaseline(s.Base); err != nil {
					return nil, nil, s.e.fail("record baseline", err)
				}
			}
			s.SaveStats()
			return res, nil, nil
		}
	}
	chain, err := s.e.sync(s.Ctx, state)
	if err != nil {
		return nil, nil, err
	}
	s.Src = s.Env.Caches.Source(chain)
	if flag != nil && s.Base != nil {
		if _, err := s.settleRewrite(flag, true); err != nil {
			return nil, nil, s.recoveryFailure(*flag, "settle", err)
		}
		s.Base = s.Pending.Adopt(s.Ctx, s.Env.Notebook, s.Base, state)
	}
	var rFiles map[string]cas.ID
	if s.Base != nil && state.Head() == s.Base.Head && !s.Base.HasUnknown() {
		rFiles = s.Base.HeadTree()
	} else if rFiles, err = objcache.TreeOf(s.Src, state.Head()); err != nil {
		return nil, nil, s.e.fail("read remote tree", err)
	}
	m, err := s.MergeWith(state.Head(), rFiles)
	if err != nil {
		return nil, nil, s.e.fail("merge", err)
	}
	changes, err := s.Plan(m)
	if err != nil {
		return nil, nil, s.e.fail("plan rewrite", err)
	}
	res.Files = diffstat(changes)
	next, err := s.nextBaseline(state.Generation(), state.Head(), rFiles, m.Conflicts)
	if err != nil {
		return nil, nil, s.e.fail("keep held base", err)
	}
	if err := s.materialise(changes, pstate.RecoveryFlag{Op: op, RemoteAccepted: "no", Generation: state.Generation()}, next, false); err != nil {
		return nil, nil, err
	}
	return res, m.Conflicts, nil
}

// conflictError reports merge conflicts written into L.
func conflictError(conflicts []merge.Conflict) *diag.Error {
	msg := ""
	for _, c := range conflicts {
		if c.Reason == diag.NoRecord {
			msg = "This directory has no sync record here (it was copied or renamed, or its private state was cleared): files equal to the notebook's were adopted, and each differing file now holds its own text and the notebook's in one conflict block. Merge each block, then commit."
		}
	}
	de := diag.New(diag.CodeContentConflict, diag.ReasonMergeConflict, msg, nil)
	for _, c := range conflicts {
		ranges := append([]merge.Range{}, c.Ranges...)
		de.Files = append(de.Files, diag.FileError{Path: c.Path, Reason: string(c.Reason), Ranges: ranges})
	}
	return de
}
