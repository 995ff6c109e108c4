package server

import (
	"context"
	"sort"
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
	s.adoptPublished(state)
	// Likewise, files an interrupted rewrite already wrote are the tool's,
	// not local changes (rewrite_record.go).
	if flag, err := s.state.loadRecovery(); err == nil && flag != nil {
		if _, err := s.settleRewrite(flag, false); err != nil {
			return nil, e.fail("settle", err)
		}
	}
	base := s.baseFiles()
	for p, id := range s.scan.files {
		if s.scan.virtual[p] {
			continue // the accepted file at a path L leaves out: not a change
		}
		old, ok := base[p]
		switch {
		case !ok:
			st.Added = append(st.Added, p)
		case old != id:
			st.Modified = append(st.Modified, p)
		}
	}
	for p := range base {
		if _, ok := s.scan.files[p]; !ok {
			st.Deleted = append(st.Deleted, p)
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
