package commit

import (
	"errors"
	"io/fs"
	"maps"
	"slices"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/build"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/pull"
	"github.com/slivingdoc/slivingdoc/server/rewrite"
)

// call is one commit: the directory's call, the engine's publishing, and
// what the commit keeps while it publishes.
type call struct {
	*dircall.Call
	p *Publishing

	// prep is the next baseline, written ahead while the commit is
	// published (pstate.Prepared; nil: none).
	prep *pstate.Prepared
	v4   *v4Call // the version-4 publication in progress (publish.go)
}

// Run commits what L holds beyond A on call c (its locks taken, A
// loaded), after the checks a commit makes before its first write, in
// this order: a lost or missing baseline, L present, an interrupted
// call resynchronised (pull.RecoverFirst), L scanned, then refuseMarkers,
// refuseSecrets and refuseReadOnly. The message was checked before the
// call began (CheckMessage). Errors are *diag.Error.
func Run(c *dircall.Call, p *Publishing, message string) (*dircall.Result, error) {
	s := &call{Call: c, p: p}
	// A next baseline written ahead and not installed is discarded
	// before the call ends (and its locks are released).
	defer func() {
		s.prep.Discard()
		s.prep = nil
	}()
	if s.Lost {
		return nil, dircall.BaselineLost()
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
	if err := pull.RecoverFirst(s.Call); err != nil {
		return nil, err
	}
	if s.Scan == nil {
		if _, err := s.ScanL(); err != nil {
			return nil, err
		}
	}
	if err := refuseMarkers(s.Call); err != nil {
		return nil, err
	}
	if err := refuseSecrets(s.Call, message); err != nil {
		return nil, err
	}
	if err := refuseReadOnly(s.Call); err != nil {
		return nil, err
	}
	return s.publish(message)
}

// publish publishes the commit by format version 4 (publish.go): a
// store of version 1–3 is upgraded by the commit's own write. The merge
// runs inside the protocol, so every version of the change is built on
// the state it is registered against.
func (s *call) publish(message string) (*dircall.Result, error) {
	return s.publishV4(message)
}

// finishUnchanged brings L and P up to date when the merge equalled the
// state read: nothing was published, L becomes that state's tree (others'
// changes brought in) and the baseline records it.
func (s *call) finishUnchanged(last *build.Attempt) (*dircall.Result, error) {
	s.Ctx = dircall.Detach(s.Ctx)
	st := last.Observed
	flag := pstate.RecoveryFlag{Op: "commit", RemoteAccepted: "no", Generation: st.Generation()}
	if err := rewrite.Failpoint(rewrite.FailAfterPublish); err != nil {
		return nil, pull.RecoveryFailure(s.Call, flag, "publish", err)
	}
	res := &dircall.Result{Path: s.Dir, Generation: st.Generation(), Files: []dircall.FileStat{}}
	target := last.Merged
	if s.prep != nil {
		s.prep.Wait() // done reading target.ids before anything changes them
	}
	changes, err := s.Plan(target)
	if err != nil {
		return nil, pull.RecoveryFailure(s.Call, flag, "rewrite", err)
	}
	res.BroughtIn = dircall.Diffstat(changes)
	next := dirstate.NewBaseline(st.Generation(), st.Head(), target.IDs)
	if last.From != nil {
		// L itself was the merge: the next baseline is the last one plus
		// the changes, and so is its ignored set.
		next.Ignored, next.IgnoredKnown = last.From.IgnoredAfter(last.Changes, s.Env.IgnoredPath)
	}
	if err := pull.Materialise(s.Call, changes, flag, next, false); err != nil {
		return nil, err
	}
	return res, nil
}

// materialiseConflict writes the conflict blocks into L, records the
// observed R as the baseline (so resolving them and committing publishes
// the resolution) and reports the conflicts. Nothing was published.
func (s *call) materialiseConflict(last build.Outcome) error {
	changes, err := s.Plan(last.Merged)
	if err != nil {
		return s.Env.Fail("plan rewrite", err)
	}
	st := last.Observed
	flag := pstate.RecoveryFlag{Op: "commit", RemoteAccepted: "no", Generation: st.Generation()}
	next, err := rewrite.NextBaseline(s.Call, st.Generation(), st.Head(), last.RFiles, last.Merged.Conflicts)
	if err != nil {
		return s.Env.Fail("keep held base", err)
	}
	if err := pull.Materialise(s.Call, changes, flag, next, false); err != nil {
		return err
	}
	return pull.ConflictError(last.Merged.Conflicts)
}

// keepRecent keeps the published content of the files the commit changed
// that the scan read from L (recent.go): the next commit of those files
// reads it as its old version.
func (s *call) keepRecent(last *build.Attempt) {
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
func (s *call) diffstat(state remote.State, last build.Outcome) ([]dircall.FileStat, error) {
	files, err := s.increment(last)
	if err == nil || !errors.Is(err, cas.ErrCorrupt) || !s.Env.Caches.Heal() {
		return files, err
	}
	chain, err := s.Env.Sync(s.Ctx, state)
	if err != nil {
		return nil, err
	}
	s.Src = s.Env.Caches.Source(chain)
	return s.increment(last)
}

// increment is the commit's diffstat: the merged tree against the observed
// remote parent tree. Only changed paths (found while building the
// publication) are visited, in sorted order.
func (s *call) increment(last build.Outcome) ([]dircall.FileStat, error) {
	ids, parent := last.Merged.IDs, last.RFiles
	paths := slices.Sorted(maps.Keys(last.Changed))
	out := []dircall.FileStat{}
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
		out = append(out, dircall.FileStat{Path: p, Insertions: ins, Deletions: del})
	}
	return out, nil
}
