package server

import (
	"context"
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/rewrite"
)

// Status reports local changes against the baseline (added, modified,
// deleted files) and the accepted generation now, without publishing or
// touching L. A directory never pulled reports every file as added.
func (e *Engine) Status(ctx context.Context, path string) (*Status, error) {
	s, err := e.begin(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.End()
	if s.Lost {
		return nil, dircall.BaselineLost()
	}
	st := &Status{Path: s.Dir, Added: []string{}, Modified: []string{}, Deleted: []string{}}
	if s.Base != nil {
		st.BaseGeneration = s.Base.Generation
	}
	if err := s.OpenL(false); err == nil {
		if _, err := s.ScanL(); err != nil {
			return nil, err
		}
	} else if s.Base == nil {
		// Neither pulled nor present: an empty directory to be.
		s.Scan = &dircall.Scan{}
	} else {
		return nil, err
	}
	state, err := e.env.Notebook.ReadCurrent(ctx)
	if err != nil {
		return nil, e.env.Fail("read current", err)
	}
	st.Generation = state.Generation()
	// A commit accepted and then interrupted before its baseline was
	// recorded has published its edits: they are not local changes.
	s.Base = s.Pending.Adopt(s.Ctx, s.Env.Notebook, s.Base, state)
	// Likewise, files an interrupted rewrite already wrote are the tool's,
	// not local changes (server/rewrite).
	if flag, err := s.State.LoadRecovery(); err == nil && flag != nil {
		if _, err := rewrite.Settle(s.Call, flag, false); err != nil {
			return nil, e.env.Fail("settle", err)
		}
	}
	// The delta against A, not two walks over maps of every path: on a
	// loaded baseline it reads A's entries in place, one lookup each, and
	// a long-lived engine finds it from the last call's tree.
	changes := map[string]cas.ID{}
	var prev map[string]cas.ID
	if s.Base != nil {
		changes, prev = s.BaseDelta(false)
	} else {
		for p, id := range s.Scan.Files {
			changes[p] = id
		}
	}
	for p := range changes {
		if s.Scan.Virtual[p] {
			continue // the accepted file at a path L leaves out: not a change
		}
		_, inA := prev[p]
		_, inL := s.Scan.Files[p]
		switch {
		case !inA:
			st.Added = append(st.Added, p)
		case !inL:
			st.Deleted = append(st.Deleted, p)
		default:
			st.Modified = append(st.Modified, p)
		}
	}
	sort.Strings(st.Added)
	sort.Strings(st.Modified)
	sort.Strings(st.Deleted)
	if len(s.Scan.Ignored) > 0 {
		st.Ignored = append(st.Ignored, s.Scan.Ignored...) // sorted by the scan
	}
	s.SaveStats()
	return st, nil
}
