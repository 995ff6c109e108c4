package server

import (
	"context"
	"errors"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Pull writes the merge of baseline, visible directory and accepted state
// into the directory and records the accepted state. Pull never publishes.
// Overlapping changes leave conflict blocks in the files and return
// CONTENT_CONFLICT/MERGE_CONFLICT (with the new state recorded). Errors
// are *Error.
func (e *Engine) Pull(ctx context.Context, path string) (*Result, error) {
	return withHealing(e, func() (*Result, error) { return e.pull(ctx, path) })
}

func (e *Engine) pull(ctx context.Context, path string) (*Result, error) {
	s, err := e.begin(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.end()
	if err := s.open(true); err != nil {
		return nil, err
	}
	if s.lostAndNotEmpty() {
		return nil, baselineLost()
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
	if _, err := s.scanL(); err != nil {
		return nil, nil, err
	}
	state, err := s.e.notebook.ReadCurrent(s.ctx)
	if err != nil {
		return nil, nil, s.e.fail("read current", err)
	}
	res, conflicts, err := s.syncTo(op, state)
	var de *Error
	if errors.As(err, &de) && de.Reason == ReasonMissingPack {
		// A cleanup after a newer checkpoint removed a pack the manifest
		// just read named (nothing was rewritten yet): the newer
		// `current` no longer needs it (cache.go, remote/cleanup.go).
		if again, rerr := s.e.notebook.ReadCurrent(s.ctx); rerr == nil && again.Generation() > state.Generation() {
			return s.syncTo(op, again)
		}
	}
	return res, conflicts, err
}

// syncTo merges R = state into L against A and records it. The scan of L
// must be current.
func (s *session) syncTo(op string, state remote.State) (*Result, []merge.Conflict, error) {
	if s.dropOutlivedRecord(state) && s.lostAndNotEmpty() {
		return nil, nil, outlivedRecord() // remembered.go
	}
	pending, err := s.state.loadRecovery()
	if err != nil {
		return nil, nil, s.e.fail("load recovery flag", err)
	}
	s.adoptPublished(state)
	s.rollForward(pending)
	res := &Result{Path: s.dir, Generation: state.Generation(), Files: []FileStat{}}
	if s.base != nil && state.Head() == s.base.Head && s.base.exact() && pending == nil && len(s.scan.temps) == 0 && len(s.scan.restore) == 0 {
		// R == A: the merge is L itself; nothing to fetch or rewrite.
		if s.base.Generation != state.Generation() {
			s.base.Generation = state.Generation()
			if err := s.state.saveBaseline(s.base); err != nil {
				return nil, nil, s.e.fail("record baseline", err)
			}
		}
		s.saveStats()
		return res, nil, nil
	}
	chain, err := s.e.sync(s.ctx, state)
	if err != nil {
		return nil, nil, err
	}
	s.src = s.e.source(chain)
	s.rollEditedForward()
	var rFiles map[string]cas.ID
	if s.base != nil && state.Head() == s.base.Head {
		rFiles = s.base.headFiles()
	} else if rFiles, err = treeOf(s.src, state.Head()); err != nil {
		return nil, nil, s.e.fail("read remote tree", err)
	}
	m, err := s.mergeWith(state.Head(), rFiles)
	if err != nil {
		return nil, nil, s.e.fail("merge", err)
	}
	changes, err := s.plan(m)
	if err != nil {
		return nil, nil, s.e.fail("plan rewrite", err)
	}
	res.Files = diffstat(changes)
	flag := recoveryFlag{Op: op, RemoteAccepted: "no", Generation: state.Generation()}
	next, err := s.nextBaseline(state.Generation(), state.Head(), rFiles, m.conflicts)
	if err != nil {
		return nil, nil, s.e.fail("keep held base", err)
	}
	if err := s.materialise(changes, flag, next); err != nil {
		return nil, nil, err
	}
	return res, m.conflicts, nil
}

// materialise rewrites L and records the new baseline, with the recovery
// flag covering both; a failure once L may have changed becomes
// RECOVERY_FAILURE (after an attempt to resynchronise at once).
func (s *session) materialise(changes []change, flag recoveryFlag, next *baseline) error {
	pending, err := s.state.loadRecovery()
	if err != nil {
		return s.e.fail("load recovery flag", err)
	}
	mutating := len(changes) > 0 || len(s.scan.temps) > 0 || pending != nil
	if err := s.apply(changes, flag, next); err != nil {
		var ns *notStarted
		if errors.As(err, &ns) && pending == nil {
			return s.e.fail("record recovery flag", ns.err)
		}
		return s.recoveryFailure(flag, "rewrite", err)
	}
	// Same accepted head and generation: the recorded baseline already
	// says this (a baseline is its head's tree), so skip the write.
	if mutating || s.base == nil || s.base.Head != next.Head || s.base.Generation != next.Generation || !sameTree(s.base.Held, next.Held) {
		if err := s.state.saveBaseline(next); err != nil {
			if !mutating {
				return s.e.fail("record baseline", err)
			}
			return s.recoveryFailure(flag, "baseline", err)
		}
		if s.pendingOnDisk && (s.base == nil || s.base.Head != next.Head) {
			s.dropPending() // the record's base is superseded
		}
		s.adopted = nil
		s.rolled = nil
		s.base = next
		s.state.pruneHeld(next)
	}
	if mutating {
		if err := failpoint(FailAfterBaseline); err != nil {
			return s.recoveryFailure(flag, "baseline", err)
		}
		if err := s.state.clearRecovery(); err != nil {
			return s.recoveryFailure(flag, "baseline", err)
		}
		s.state.removeRewrite()
	}
	s.saveStats()
	return nil
}

// nextBaseline is the baseline recording R (head, rFiles) after a merge
// with these conflicts: R's tree, except that each path merge.Trees left
// Unresolved (L's file still holds blocks) keeps its current base, whose
// content is saved in P first (see baseline.Held).
func (s *session) nextBaseline(gen uint64, head cas.ID, rFiles map[string]cas.ID, conflicts []merge.Conflict) (*baseline, error) {
	next := &baseline{Generation: gen, Head: head, Files: rFiles}
	for _, c := range conflicts {
		if c.Reason != merge.Unresolved {
			continue
		}
		if next.Held == nil {
			next.Held = map[string]cas.ID{}
			next.Files = make(map[string]cas.ID, len(rFiles))
			for p, id := range rFiles {
				next.Files[p] = id
			}
		}
		next.Held[c.Path] = rFiles[c.Path]
		id, ok := s.baseFiles()[c.Path]
		if !ok {
			delete(next.Files, c.Path)
			continue
		}
		content, err := s.load(id)
		if err != nil {
			return nil, err
		}
		if err := s.state.saveHeld(id, content); err != nil {
			return nil, err
		}
		next.Files[c.Path] = id
	}
	return next, nil
}

// conflictError reports merge conflicts written into L.
func conflictError(conflicts []merge.Conflict) *Error {
	de := newError(CodeContentConflict, ReasonMergeConflict, "", nil)
	for _, c := range conflicts {
		ranges := append([]merge.Range{}, c.Ranges...)
		de.Files = append(de.Files, FileError{Path: c.Path, Reason: string(c.Reason), Ranges: ranges})
	}
	return de
}
