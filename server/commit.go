package server

import (
	"context"
	"errors"
	"io/fs"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/build"
	"github.com/slivingdoc/slivingdoc/server/commit"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// Commit publishes the directory's changes and incorporates concurrent
// non-conflicting ones (DESIGN §6). Errors are *diag.Error.
func (e *Engine) Commit(ctx context.Context, path, message string) (*Result, error) {
	if err := commit.CheckMessage(message); err != nil {
		return nil, err
	}
	return withHealing(e, func() (*Result, error) { return e.commit(ctx, path, message) })
}

func (e *Engine) commit(ctx context.Context, path, message string) (*Result, error) {
	s, err := e.begin(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.end()
	if s.Lost {
		return nil, baselineLost()
	}
	if s.Base == nil {
		return nil, diag.InvalidRequest(diag.ReasonNotPulled, "")
	}
	if err := s.OpenL(false); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, diag.InvalidRequest(diag.ReasonPathNotDirectory, "The directory does not exist.")
		}
		return nil, err
	}
	if err := s.recoverFirst(); err != nil {
		return nil, err
	}
	if s.Scan == nil {
		if _, err := s.ScanL(); err != nil {
			return nil, err
		}
	}
	if err := commit.RefuseMarkers(s.Call); err != nil {
		return nil, err
	}
	if err := commit.RefuseSecrets(s.Call, message); err != nil {
		return nil, err
	}
	if err := commit.RefuseReadOnly(s.Call); err != nil {
		return nil, err
	}
	return s.publish(message)
}

// publish publishes the commit by format version 4 (publish_v4.go): a
// store of version 1–3 is upgraded by the commit's own write. The merge
// runs inside the protocol, so every version of the change is built on
// the state it is registered against.
func (s *session) publish(message string) (*Result, error) {
	return s.publishV4(message)
}

// finishUnchanged brings L and P up to date when the merge equalled the
// state read: nothing was published, L becomes that state's tree (others'
// changes brought in) and the baseline records it.
func (s *session) finishUnchanged(last *build.Attempt) (*Result, error) {
	s.Ctx = detach(s.Ctx)
	st := last.Observed
	flag := pstate.RecoveryFlag{Op: "commit", RemoteAccepted: "no", Generation: st.Generation()}
	if err := failpoint(FailAfterPublish); err != nil {
		return nil, s.recoveryFailure(flag, "publish", err)
	}
	res := &Result{Path: s.Dir, Generation: st.Generation(), Files: []FileStat{}}
	target := last.Merged
	if s.prep != nil {
		s.prep.Wait() // done reading target.ids before anything changes them
	}
	changes, err := s.Plan(target)
	if err != nil {
		return nil, s.recoveryFailure(flag, "rewrite", err)
	}
	res.BroughtIn = diffstat(changes)
	next := dirstate.NewBaseline(st.Generation(), st.Head(), target.IDs)
	if last.From != nil {
		// L itself was the merge: the next baseline is the last one plus
		// the changes, and so is its ignored set.
		next.Ignored, next.IgnoredKnown = last.From.IgnoredAfter(last.Changes, s.e.ignoredPath)
	}
	if err := s.materialise(changes, flag, next, false); err != nil {
		return nil, err
	}
	return res, nil
}

// materialiseConflict writes the conflict blocks into L, records the
// observed R as the baseline (so resolving them and committing publishes
// the resolution) and reports the conflicts. Nothing was published.
func (s *session) materialiseConflict(last build.Outcome) error {
	changes, err := s.Plan(last.Merged)
	if err != nil {
		return s.e.fail("plan rewrite", err)
	}
	st := last.Observed
	flag := pstate.RecoveryFlag{Op: "commit", RemoteAccepted: "no", Generation: st.Generation()}
	next, err := s.nextBaseline(st.Generation(), st.Head(), last.RFiles, last.Merged.Conflicts)
	if err != nil {
		return s.e.fail("keep held base", err)
	}
	if err := s.materialise(changes, flag, next, false); err != nil {
		return err
	}
	return conflictError(last.Merged.Conflicts)
}

// keepRecent keeps the published content of the files the commit changed
// that the scan read from L (recent.go): the next commit of those files
// reads it as its old version.
func (s *session) keepRecent(last *build.Attempt) {
	if s.Env.Recent == nil || s.Scan == nil {
		return
	}
	for p, id := range last.Changed {
		if c, ok := s.Scan.Content[p]; ok && !id.IsZero() && s.Scan.Files[p] == id {
			s.Env.Recent.Put(id, c)
		}
	}
}

// diffstat is increment, once more after healing the cache if a cached
// object was corrupt.
func (s *session) diffstat(state remote.State, last build.Outcome) ([]FileStat, error) {
	files, err := s.increment(last)
	if err == nil || !errors.Is(err, cas.ErrCorrupt) || !s.Env.Caches.Heal() {
		return files, err
	}
	chain, err := s.e.sync(s.Ctx, state)
	if err != nil {
		return nil, err
	}
	s.Src = s.Env.Caches.Source(chain)
	return s.increment(last)
}

// increment is the commit's diffstat: the merged tree against the observed
// remote parent tree. Only changed paths (found while building the
// publication) are visited, in sorted order.
func (s *session) increment(last build.Outcome) ([]FileStat, error) {
	ids, parent := last.Merged.IDs, last.RFiles
	paths := sortedKeys(last.Changed)
	out := []FileStat{}
	for _, p := range paths {
		oldID, hadOld := parent[p]
		_, hasNew := ids[p]
		var oldC, newC []byte
		var err error
		if hadOld {
			if oldC, err = s.Load(oldID); err != nil {
				return nil, err
			}
		}
		if hasNew {
			if newC, err = s.Content(last.Merged, p); err != nil {
				return nil, err
			}
		}
		ins, del := merge.Stat(oldC, newC) // an absent side is empty
		out = append(out, FileStat{Path: p, Insertions: ins, Deletions: del})
	}
	return out, nil
}
