package server

import (
	"errors"
	"io/fs"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// The session's side of the plan (package server/plan computes it): the
// merge of A, L and R, the changes it makes to L, and the rewrite that
// carries them out under the recovery flag.

// mergeWith merges A, L and R (rHead, rFiles). The common cases skip the
// tree merge: R == A yields L (a commit with no concurrent change), L == A
// yields R (a pull with no local change).
func (s *session) mergeWith(rHead cas.ID, rFiles map[string]cas.ID) (*plan.Merged, error) {
	if rHead == s.baseHead() && s.base.Exact() {
		return &plan.Merged{IDs: s.scan.files, Local: true}, nil
	}
	if s.localIsBase() {
		return &plan.Merged{IDs: rFiles}, nil
	}
	return plan.Merge(s.baseFiles(), s.scan.files, rFiles, s.base.UnknownPaths(), s.load)
}

// local is L as the session's scan read it.
func (s *session) local() plan.Local {
	if s.scan == nil {
		return plan.Local{}
	}
	return plan.Local{Files: s.scan.files, Content: s.scan.content, Stats: s.scan.stats}
}

// content returns the content of path p of the result.
func (s *session) content(m *plan.Merged, p string) ([]byte, error) {
	return m.Content(p, s.local(), s.load)
}

// plan is the change m makes to L (plan.Changes) without the paths L
// ignores (never written or removed in L) and with the withheld files to
// restore now that no rule ignores them (when the accepted content can be
// read: a pull always can).
func (s *session) plan(m *plan.Merged) ([]plan.Change, error) {
	changes, err := plan.Changes(m, s.local(), s.load)
	if err != nil || s.scan == nil || (s.scan.virtual == nil && s.e.ignore.Empty()) {
		return changes, err
	}
	changes, withheld := plan.LeaveIgnored(changes, s.e.ignore, s.scan.virtual)
	if len(withheld) > 0 {
		// Recorded before the rewrite: should the baseline not follow, the
		// next scan drops the entries A lacks.
		s.scan.withheld = append(s.scan.withheld, withheld...)
		if err := plan.SaveWithheld(s.state.Dir, append([]string{}, s.scan.withheld...)); err != nil {
			return nil, err
		}
	}
	if s.src == nil {
		return changes, nil
	}
	return plan.Restore(changes, s.scan.restore, m, func(p string) ([]byte, error) { return s.content(m, p) })
}

// apply rewrites L towards next, after recording what settling needs
// should it be interrupted (rewrite_record.go): the next baseline, the
// contents only L holds, the rewrite record and the recovery flag. Then
// removals (and the directories they empty), then each new content written
// to a temporary sibling, fsynced and renamed over its target. It returns
// the next baseline's encoding, for State.InstallNextBaseline (server/dirstate). The stat cache is
// updated with what was written; entries stay untrusted until a later scan.
func (s *session) apply(changes []plan.Change, flag pstate.RecoveryFlag, next *dirstate.Baseline, baseBefore map[string]cas.ID) ([]byte, error) {
	if err := s.state.RecordWhere(); err != nil {
		return nil, &notStarted{err}
	}
	sum, data, err := s.state.SaveNextBaseline(&next.Baseline, next.Prepared)
	if err != nil {
		return nil, &notStarted{err}
	}
	if err := s.keepRewriteContents(changes, baseBefore, next.Tree()); err != nil {
		return nil, &notStarted{err}
	}
	flag.Stage = "rewrite"
	if flag.Rewrite, err = s.state.SaveRewrite(rewriteRecordFor(changes, s.scan.files, baseBefore, sum)); err != nil {
		return nil, &notStarted{err}
	}
	if err := failpoint(FailAfterRewriteRecord); err != nil {
		return nil, &notStarted{err}
	}
	if err := s.state.SetRecovery(flag); err != nil {
		return nil, &notStarted{err}
	}
	if err := failpoint(FailAfterRecoveryFlag); err != nil {
		return nil, err
	}
	for _, t := range s.scan.temps {
		if err := s.root.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	s.scan.temps = nil
	s.scan.changed = true
	s.scan.byID = nil // rebuilt from the rewritten tree on demand
	for _, c := range changes {
		if !c.Del {
			continue
		}
		if err := workdir.RemoveFile(s.root, c.Path, c.Was); err != nil {
			return nil, err
		}
		delete(s.scan.files, c.Path)
		s.scan.stats.Delete(c.Path)
		delete(s.scan.content, c.Path)
	}
	return data, s.writeAll(changes)
}

// notStarted wraps a failure that happened before L was touched.
type notStarted struct{ err error }

func (n *notStarted) Error() string { return n.err.Error() }
func (n *notStarted) Unwrap() error { return n.err }

// writeAll writes every non-deleted change (workdir.WriteFiles) and
// records each written file in the scan, as L now holds it.
func (s *session) writeAll(changes []plan.Change) error {
	var writes []workdir.Write
	var of []int // index in changes of each write
	for i := range changes {
		if c := &changes[i]; !c.Del {
			writes = append(writes, workdir.Write{Path: c.Path, Content: c.Content, Was: c.Was})
			of = append(of, i)
		}
	}
	err := workdir.WriteFiles(s.root, writes, func(i int, st workdir.Entry) error {
		c := &changes[of[i]]
		st.ID = c.ID
		st.Markers = len(merge.ScanMarkers(c.Content)) > 0
		st.Key = c.Path
		s.scan.files[c.Path] = c.ID
		s.scan.stats.Set(c.Path, st)
		s.scan.content[c.Path] = c.Content
		if i == 0 {
			return failpoint(FailMidRewrite)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return failpoint(FailAfterRewrite)
}
