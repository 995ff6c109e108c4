package pull

import (
	"errors"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rewrite"
)

// Run is the synchronisation shared by a pull and by recovery: scan L,
// read `current`, merge(A, L, R), rewrite L, record R as the baseline.
func Run(s *dircall.Call, op string) (*dircall.Result, []merge.Conflict, error) {
	if _, err := s.ScanL(); err != nil {
		return nil, nil, err
	}
	state, err := s.Env.Notebook.ReadCurrent(s.Ctx)
	if err != nil {
		return nil, nil, s.Env.Fail("read current", err)
	}
	res, conflicts, err := SyncTo(s, op, state)
	var de *diag.Error
	if errors.As(err, &de) && de.Reason == diag.ReasonMissingPack {
		// A cleanup after a newer checkpoint removed a pack the manifest
		// just read named (nothing was rewritten yet): the newer
		// `current` no longer needs it (server/objcache, remote/cleanup.go).
		if again, rerr := s.Env.Notebook.ReadCurrent(s.Ctx); rerr == nil && again.Generation() > state.Generation() {
			return SyncTo(s, op, again)
		}
	}
	return res, conflicts, err
}

// SyncTo merges R = state into L against A and records it. The scan of L
// must be current. An interrupted rewrite is settled first (once the chain
// can be read, since telling an edited file's version may need contents).
func SyncTo(s *dircall.Call, op string, state remote.State) (*dircall.Result, []merge.Conflict, error) {
	// A record of another store, or newer than the store (restored from a
	// backup), is no record: the directory is adopted (server/dircall).
	s.DropOutlivedRecord(state)
	flag, err := s.State.LoadRecovery()
	if err != nil {
		return nil, nil, s.Env.Fail("load recovery flag", err)
	}
	res := &dircall.Result{Path: s.Dir, Generation: state.Generation(), Files: []dircall.FileStat{}}
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
					return nil, nil, s.Env.Fail("record baseline", err)
				}
			}
			s.SaveStats()
			return res, nil, nil
		}
	}
	chain, err := s.Env.Sync(s.Ctx, state)
	if err != nil {
		return nil, nil, err
	}
	s.Src = s.Env.Caches.Source(chain)
	if flag != nil && s.Base != nil {
		if _, err := rewrite.Settle(s, flag, true); err != nil {
			return nil, nil, RecoveryFailure(s, *flag, "settle", err)
		}
		s.Base = s.Pending.Adopt(s.Ctx, s.Env.Notebook, s.Base, state)
	}
	var rFiles map[string]cas.ID
	if s.Base != nil && state.Head() == s.Base.Head && !s.Base.HasUnknown() {
		rFiles = s.Base.HeadTree()
	} else if rFiles, err = objcache.TreeOf(s.Src, state.Head()); err != nil {
		return nil, nil, s.Env.Fail("read remote tree", err)
	}
	m, err := s.MergeWith(state.Head(), rFiles)
	if err != nil {
		return nil, nil, s.Env.Fail("merge", err)
	}
	changes, err := s.Plan(m)
	if err != nil {
		return nil, nil, s.Env.Fail("plan rewrite", err)
	}
	res.Files = dircall.Diffstat(changes)
	next, err := rewrite.NextBaseline(s, state.Generation(), state.Head(), rFiles, m.Conflicts)
	if err != nil {
		return nil, nil, s.Env.Fail("keep held base", err)
	}
	if err := Materialise(s, changes, pstate.RecoveryFlag{Op: op, RemoteAccepted: "no", Generation: state.Generation()}, next, false); err != nil {
		return nil, nil, err
	}
	return res, m.Conflicts, nil
}

// Materialise rewrites L and records next as the baseline
// (rewrite.Materialise); a failure once L may have changed becomes
// RECOVERY_FAILURE at once, after an attempt to resynchronise: nothing
// runs between the rewrite's return and RecoveryFailure.
func Materialise(s *dircall.Call, changes []plan.Change, flag pstate.RecoveryFlag, next *dirstate.Baseline, ifAccepted bool) error {
	err := rewrite.Materialise(s, changes, flag, next, ifAccepted)
	if in, ok := err.(*rewrite.Interrupted); ok {
		return RecoveryFailure(s, in.Flag, in.Stage, in.Err)
	}
	return err
}

// ConflictError reports merge conflicts written into L.
func ConflictError(conflicts []merge.Conflict) *diag.Error {
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
