package server

import (
	"context"
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Status reports local changes against the baseline (added, modified,
// deleted files) and the accepted generation now, without publishing or
// touching L. A directory never pulled reports every file as added.
func (e *Engine) Status(ctx context.Context, path string) (*Status, error) {
	s, err := e.begin(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.end()
	if s.lost {
		return nil, baselineLost()
	}
	st := &Status{Path: s.dir, Added: []string{}, Modified: []string{}, Deleted: []string{}}
	if s.base != nil {
		st.BaseGeneration = s.base.Generation
	}
	if err := s.open(false); err == nil {
		if _, err := s.scanL(); err != nil {
			return nil, err
		}
	} else if s.base == nil {
		// Neither pulled nor present: an empty directory to be.
		s.scan = &scanResult{}
	} else {
		return nil, err
	}
	state, err := e.notebook.ReadCurrent(ctx)
	if err != nil {
		return nil, e.fail("read current", err)
	}
	st.Generation = state.Generation()
	// A commit accepted and then interrupted before its baseline was
	// recorded has published its edits: they are not local changes.
	s.base = s.pending.Adopt(s.ctx, s.e.notebook, s.base, state)
	// Likewise, files an interrupted rewrite already wrote are the tool's,
	// not local changes (rewrite_record.go).
	if flag, err := s.state.LoadRecovery(); err == nil && flag != nil {
		if _, err := s.settleRewrite(flag, false); err != nil {
			return nil, e.fail("settle", err)
		}
	}
	// The delta against A, not two walks over maps of every path: on a
	// loaded baseline it reads A's entries in place, one lookup each, and
	// a long-lived engine finds it from the last call's tree.
	changes := map[string]cas.ID{}
	var prev map[string]cas.ID
	if s.base != nil {
		changes, prev = s.baseDelta(false)
	} else {
		for p, id := range s.scan.files {
			changes[p] = id
		}
	}
	for p := range changes {
		if s.scan.virtual[p] {
			continue // the accepted file at a path L leaves out: not a change
		}
		_, inA := prev[p]
		_, inL := s.scan.files[p]
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
	if len(s.scan.ignored) > 0 {
		st.Ignored = append(st.Ignored, s.scan.ignored...) // sorted by the scan
	}
	s.saveStats()
	return st, nil
}
