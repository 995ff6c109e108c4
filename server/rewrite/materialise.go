package rewrite

import (
	"errors"
	"slices"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/interrupt"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// Interrupted is a failure of Materialise once L may have changed: the
// caller must act on it at once, before anything else runs, by recording
// Flag at Stage and resynchronising (RECOVERY_FAILURE). The rewrite
// cannot do it itself, since resynchronising is a whole pull.
type Interrupted struct {
	Flag  pstate.RecoveryFlag // the flag of the interrupted operation
	Stage string              // where it failed: "rewrite" or "baseline"
	Err   error               // the cause
}

func (i *Interrupted) Error() string { return i.Err.Error() }
func (i *Interrupted) Unwrap() error { return i.Err }

// Materialise rewrites L and records next as the baseline, with the
// recovery flag covering both; a failure once L may have changed is
// returned as an *Interrupted, one before L was touched as a catalogued
// error. ifAccepted says that L holds the call's own accepted
// publication: each path's base while L still holds its old file is then
// A with that publication applied (the Pending tracker's IfAccepted), not
// A's; it is asked only when L is rewritten, since building that map (a
// copy of every path) is most of what a commit that rewrites nothing
// would spend here.
func Materialise(s *dircall.Call, changes []plan.Change, flag pstate.RecoveryFlag, next *dirstate.Baseline, ifAccepted bool) error {
	pending, err := s.State.LoadRecovery()
	if err != nil {
		return s.Env.Fail("load recovery flag", err)
	}
	if len(changes) == 0 && len(s.Scan.Temps) == 0 && pending == nil {
		// Nothing to rewrite. Same accepted head and generation: the
		// recorded baseline already says this, so skip the write.
		if s.Base == nil || s.Base.Head != next.Head || s.Base.Generation != next.Generation || !sameTree(s.Base.Held, next.Held) || !s.Base.Exact() {
			if err := s.State.SaveBaseline(next); err != nil {
				return s.Env.Fail("record baseline", err)
			}
			recorded(s, next)
			s.State.PruneHeld(&next.Baseline)
		}
		s.SaveStats()
		return nil
	}
	var before map[string]cas.ID
	if ifAccepted {
		before = s.Pending.IfAccepted(s.Base)
	}
	if before == nil {
		before = s.BaseFiles()
	}
	// From here an interrupt lets the rewrite finish rather than cut it:
	// the CLI installs its signal handler now (internal/interrupt).
	interrupt.Arm(s.Ctx)
	saved, err := apply(s, changes, flag, next, before)
	if err != nil {
		var ns *notStarted
		if errors.As(err, &ns) && pending == nil {
			return s.Env.Fail("record the rewrite", ns.err) // L untouched
		}
		return &Interrupted{Flag: flag, Stage: "rewrite", Err: err}
	}
	if err := s.State.InstallNextBaseline(next, saved); err != nil {
		return &Interrupted{Flag: flag, Stage: "baseline", Err: err}
	}
	recorded(s, next)
	if err := Failpoint(FailAfterBaseline); err != nil {
		return &Interrupted{Flag: flag, Stage: "baseline", Err: err}
	}
	if err := s.State.ClearRecovery(); err != nil {
		return &Interrupted{Flag: flag, Stage: "baseline", Err: err}
	}
	s.State.RemoveRewrite()
	// Only now: settling an interrupted rewrite may need what P holds.
	s.State.PruneHeld(&next.Baseline)
	s.SaveStats()
	return nil
}

// recorded makes next, just recorded in P, the call's baseline.
func recorded(s *dircall.Call, next *dirstate.Baseline) {
	s.Pending.Recorded(s.Base, next.Head)
	s.Base = next
	if s.Scan != nil && len(s.Scan.Unknown) > 0 {
		// Settled by this baseline: no longer withheld (plan.AddVirtual).
		keep := s.Scan.Withheld[:0:0]
		for _, p := range s.Scan.Withheld {
			if !slices.Contains(s.Scan.Unknown, p) {
				keep = append(keep, p)
			}
		}
		if err := plan.SaveWithheld(s.State.Dir, keep); err != nil {
			s.Env.Log.Warn("cannot record the withheld paths", "err", err)
		}
		s.Scan.Withheld, s.Scan.Unknown = keep, nil
	}
}

// NextBaseline is the baseline recording R (head, rFiles) after a merge
// with these conflicts: R's tree, except that each path merge.Trees left
// Unresolved (L's file still holds blocks) keeps its current base, whose
// content is saved in P first (see pstate.Baseline).
func NextBaseline(s *dircall.Call, gen uint64, head cas.ID, rFiles map[string]cas.ID, conflicts []merge.Conflict) (*dirstate.Baseline, error) {
	next := dirstate.NewBaseline(gen, head, rFiles)
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
		id, ok := s.BaseFiles()[c.Path]
		if !ok {
			delete(next.Files, c.Path)
			continue
		}
		content, err := s.Load(id)
		if err != nil {
			return nil, err
		}
		if err := s.State.SaveHeld(id, content); err != nil {
			return nil, err
		}
		next.Files[c.Path] = id
	}
	return next, nil
}

func sameTree(a, b map[string]cas.ID) bool {
	if len(a) != len(b) {
		return false
	}
	for p, id := range a {
		if other, ok := b[p]; !ok || other != id {
			return false
		}
	}
	return true
}
