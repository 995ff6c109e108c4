package dircall

import (
	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/plan"
)

// The call's side of the plan (package server/plan computes it): the
// merge of A, L and R and the changes it makes to L.

// MergeWith merges A, L and R (rHead, rFiles). The common cases skip the
// tree merge: R == A yields L (a commit with no concurrent change), L == A
// yields R (a pull with no local change).
func (s *Call) MergeWith(rHead cas.ID, rFiles map[string]cas.ID) (*plan.Merged, error) {
	if rHead == s.BaseHead() && s.Base.Exact() {
		return &plan.Merged{IDs: s.Scan.Files, Local: true}, nil
	}
	if s.LocalIsBase() {
		return &plan.Merged{IDs: rFiles}, nil
	}
	return plan.Merge(s.BaseFiles(), s.Scan.Files, rFiles, s.Base.UnknownPaths(), s.Load)
}

// Local is L as the call's scan read it.
func (s *Call) Local() plan.Local {
	if s.Scan == nil {
		return plan.Local{}
	}
	return plan.Local{Files: s.Scan.Files, Content: s.Scan.Content, Stats: s.Scan.Stats}
}

// Content returns the content of path p of the result.
func (s *Call) Content(m *plan.Merged, p string) ([]byte, error) {
	return m.Content(p, s.Local(), s.Load)
}

// Plan is the change m makes to L (plan.Changes) without the paths L
// ignores (never written or removed in L) and with the withheld files to
// restore now that no rule ignores them (when the accepted content can be
// read: a pull always can).
func (s *Call) Plan(m *plan.Merged) ([]plan.Change, error) {
	changes, err := plan.Changes(m, s.Local(), s.Load)
	if err != nil || s.Scan == nil || (s.Scan.Virtual == nil && s.Env.Ignore.Empty()) {
		return changes, err
	}
	changes, withheld := plan.LeaveIgnored(changes, s.Env.Ignore, s.Scan.Virtual)
	if len(withheld) > 0 {
		// Recorded before the rewrite: should the baseline not follow, the
		// next scan drops the entries A lacks.
		s.Scan.Withheld = append(s.Scan.Withheld, withheld...)
		if err := plan.SaveWithheld(s.State.Dir, append([]string{}, s.Scan.Withheld...)); err != nil {
			return nil, err
		}
	}
	if s.Src == nil {
		return changes, nil
	}
	return plan.Restore(changes, s.Scan.Restore, m, func(p string) ([]byte, error) { return s.Content(m, p) })
}
