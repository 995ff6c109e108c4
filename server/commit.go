package server

import (
	"context"
	"errors"
	"io/fs"
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// errMergeConflict aborts a publication attempt whose merge conflicts.
var errMergeConflict = errors.New("server: the merge has conflicts")

// Commit publishes the directory's changes and incorporates concurrent
// non-conflicting ones (DESIGN §6). Errors are *diag.Error.
func (e *Engine) Commit(ctx context.Context, path, message string) (*Result, error) {
	if err := checkMessage(message); err != nil {
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
	if err := s.refuseMarkers(); err != nil {
		return nil, err
	}
	if err := s.refuseSecrets(message); err != nil {
		return nil, err
	}
	if err := s.refuseReadOnly(); err != nil {
		return nil, err
	}
	return s.publish(message)
}

func checkMessage(m string) *diag.Error {
	switch rules.CheckMessageText(m) {
	case rules.MessageOK:
		return nil
	case rules.MessageBlank:
		return diag.InvalidRequest(diag.ReasonBlankMessage, "")
	default:
		return diag.InvalidRequest(diag.ReasonInvalidArgument, "message must be UTF-8 without U+0000, at most 16,384 bytes.")
	}
}

// refuseMarkers refuses a commit while any file of L holds a complete
// conflict block, listing each file and block range.
func (s *session) refuseMarkers() error {
	files := s.Scan.MarkerFiles()
	if len(files) == 0 {
		return nil
	}
	de := diag.New(diag.CodeContentConflict, diag.ReasonUnresolvedMarkers, "", nil)
	for _, p := range files {
		content, err := s.Load(s.Scan.Files[p])
		if err != nil {
			return s.e.fail("read conflicted file", err)
		}
		ranges := merge.ScanMarkers(content)
		if len(ranges) == 0 {
			continue // the cached flag was stale: no complete block now
		}
		de.Files = append(de.Files, diag.FileError{Path: p, Reason: diag.FileConflictMarkers, Ranges: ranges})
	}
	if len(de.Files) == 0 {
		return nil
	}
	return de
}

// refuseReadOnly refuses a commit that changes files outside the writable
// set or inside the read-only set, resetting exactly those files to the
// accepted baseline content; other local edits stay in L.
func (s *session) refuseReadOnly() error {
	if s.Env.Sets.Empty() {
		return nil
	}
	base := s.BaseFiles()
	var refused []diag.FileError
	check := func(p string) {
		if reason := pathReasons[s.Env.Sets.Check(p)]; reason != "" {
			refused = append(refused, diag.FileError{Path: p, Reason: reason, Ranges: []merge.Range{}})
		}
	}
	for p, id := range s.Scan.Files {
		if base[p] != id { // changed or added
			check(p)
		}
	}
	for p := range base {
		if _, ok := s.Scan.Files[p]; !ok { // removed
			check(p)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	sort.Slice(refused, func(i, j int) bool { return refused[i].Path < refused[j].Path })
	// Resetting needs the baseline's content: make sure the cache holds
	// the accepted chain (a refusal is not on the fast path).
	state, err := s.Env.Notebook.ReadCurrent(s.Ctx)
	if err != nil {
		return s.e.fail("read current", err)
	}
	chain, err := s.e.sync(s.Ctx, state)
	if err != nil {
		return err
	}
	s.Src = s.Env.Caches.Source(chain)
	target := &plan.Merged{IDs: make(map[string]cas.ID, len(s.Scan.Files))}
	for p, id := range s.Scan.Files {
		target.IDs[p] = id
	}
	reason := diag.ReasonOutsideWritable
	for _, f := range refused {
		if id, ok := base[f.Path]; ok {
			target.IDs[f.Path] = id
		} else {
			delete(target.IDs, f.Path)
		}
		if f.Reason == diag.ReasonInsideReadOnly {
			reason = diag.ReasonInsideReadOnly
		}
	}
	changes, err := s.Plan(target)
	if err != nil {
		return s.e.fail("plan reset", err)
	}
	if err := s.materialise(changes, pstate.RecoveryFlag{Op: "reset", RemoteAccepted: "no", Generation: s.Base.Generation}, s.Base, false); err != nil {
		return err
	}
	de := diag.New(diag.CodeReadOnlyPath, reason, "", nil)
	de.Files = refused
	return de
}

// attemptResult is what the accepted (last) attempt decided: the part of
// an attempt that outlives the publication (diffstat, rewrite, conflicts).
type attemptResult struct {
	observed remote.State
	rFiles   map[string]cas.ID // the observed remote tree (the diffstat parent)
	merged   *plan.Merged
	pack     []byte
	changed  map[string]cas.ID // paths of merged that differ from rFiles (zero ID: removed)
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
func (s *session) finishUnchanged(last *attempt) (*Result, error) {
	s.Ctx = detach(s.Ctx)
	st := last.observed
	flag := pstate.RecoveryFlag{Op: "commit", RemoteAccepted: "no", Generation: st.Generation()}
	if err := failpoint(FailAfterPublish); err != nil {
		return nil, s.recoveryFailure(flag, "publish", err)
	}
	res := &Result{Path: s.Dir, Generation: st.Generation(), Files: []FileStat{}}
	target := last.merged
	if s.prep != nil {
		s.prep.Wait() // done reading target.ids before anything changes them
	}
	changes, err := s.Plan(target)
	if err != nil {
		return nil, s.recoveryFailure(flag, "rewrite", err)
	}
	res.BroughtIn = diffstat(changes)
	next := dirstate.NewBaseline(st.Generation(), st.Head(), target.IDs)
	if last.from != nil {
		// L itself was the merge: the next baseline is the last one plus
		// the changes, and so is its ignored set.
		next.Ignored, next.IgnoredKnown = last.from.IgnoredAfter(last.changes, s.e.ignoredPath)
	}
	if err := s.materialise(changes, flag, next, false); err != nil {
		return nil, err
	}
	return res, nil
}

// writeTree returns the root tree of ids, putting the tree objects the
// chain lacks into sink. When few paths changed it rebuilds only their
// directories from R's tree (head's, read from the chain's own cache, so
// every reused subtree is in the chain the publication extends); on 10,000
// files that is two tree objects instead of a hundred and 10,000 entries
// sorted, encoded and hashed. Anything unexpected falls back to building
// the whole tree from ids, which is always correct.
func (s *session) writeTree(sink cas.Sink, chain *cas.Store, head cas.ID, ids, changes map[string]cas.ID) (cas.ID, error) {
	if !head.IsZero() && len(changes) <= len(ids)/4 {
		if tree, err := updateTree(sink, chain, head, changes); err == nil {
			return tree, nil
		} else if !errors.Is(err, cas.ErrNotFound) {
			s.Env.Log.Warn("cannot update the tree in place; building it whole", "err", err)
		}
	}
	return cas.WriteTree(sink, ids)
}

func updateTree(sink cas.Sink, chain *cas.Store, head cas.ID, changes map[string]cas.ID) (cas.ID, error) {
	o, err := chain.Get(head)
	if err != nil {
		return cas.ID{}, err
	}
	c, err := cas.DecodeCommit(o)
	if err != nil {
		return cas.ID{}, err
	}
	return cas.UpdateTree(chain, sink, c.Tree, changes)
}

// materialiseConflict writes the conflict blocks into L, records the
// observed R as the baseline (so resolving them and committing publishes
// the resolution) and reports the conflicts. Nothing was published.
func (s *session) materialiseConflict(last attemptResult) error {
	changes, err := s.Plan(last.merged)
	if err != nil {
		return s.e.fail("plan rewrite", err)
	}
	st := last.observed
	flag := pstate.RecoveryFlag{Op: "commit", RemoteAccepted: "no", Generation: st.Generation()}
	next, err := s.nextBaseline(st.Generation(), st.Head(), last.rFiles, last.merged.Conflicts)
	if err != nil {
		return s.e.fail("keep held base", err)
	}
	if err := s.materialise(changes, flag, next, false); err != nil {
		return err
	}
	return conflictError(last.merged.Conflicts)
}

// keepRecent keeps the published content of the files the commit changed
// that the scan read from L (recent.go): the next commit of those files
// reads it as its old version.
func (s *session) keepRecent(last *attempt) {
	if s.Env.Recent == nil || s.Scan == nil {
		return
	}
	for p, id := range last.changed {
		if c, ok := s.Scan.Content[p]; ok && !id.IsZero() && s.Scan.Files[p] == id {
			s.Env.Recent.Put(id, c)
		}
	}
}

// diffstat is increment, once more after healing the cache if a cached
// object was corrupt.
func (s *session) diffstat(state remote.State, last attemptResult) ([]FileStat, error) {
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
func (s *session) increment(last attemptResult) ([]FileStat, error) {
	ids, parent := last.merged.IDs, last.rFiles
	paths := sortedKeys(last.changed)
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
			if newC, err = s.Content(last.merged, p); err != nil {
				return nil, err
			}
		}
		ins, del := merge.Stat(oldC, newC) // an absent side is empty
		out = append(out, FileStat{Path: p, Insertions: ins, Deletions: del})
	}
	return out, nil
}

// changedPaths returns the paths where ids differs from r: each with its ID
// in ids, zero where ids lacks it.
func changedPaths(r, ids map[string]cas.ID) map[string]cas.ID {
	changes := map[string]cas.ID{}
	kept := 0
	for p, id := range ids {
		if rid, ok := r[p]; ok {
			kept++
			if rid == id {
				continue
			}
		}
		changes[p] = id
	}
	if kept != len(r) { // some paths of r are gone
		for p := range r {
			if _, ok := ids[p]; !ok {
				changes[p] = cas.ID{}
			}
		}
	}
	return changes
}
