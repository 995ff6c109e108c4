package server

import (
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// The session's side of what a long-lived engine keeps of each L between
// calls (server/dirstate's Memory, whose doc says what is kept and why it
// is sound): taking it at the start of a call and handing it back at the end.

// takeRef hands the recorded tree to the session (nil: none); end()
// records the next one.
func (s *session) takeRef() *dirstate.DeltaRef {
	m := s.e.mem.Of(s.state.Path)
	if m == nil {
		return nil
	}
	r := m.Ref
	m.Ref = nil
	return r
}

// keepRef records L as this call leaves it, when that is A.
func (s *session) keepRef() {
	m := s.e.mem.Of(s.state.Path)
	if m == nil || s.base == nil || s.base.Kept == nil || m.Base != s.base.Kept || m.Stats == nil {
		return
	}
	if s.scan == nil {
		// Not scanned (log, history): L's record stands if A does.
		if r := s.ref; r != nil && r.Kept == s.base.Kept && dirstate.SameStats(r.Stats, m.Stats) {
			m.Ref = r
		}
		return
	}
	if !dirstate.SameStats(s.scan.stats, m.Stats) || !s.deltaIsEmpty() {
		return
	}
	m.Ref = &dirstate.DeltaRef{Kept: s.base.Kept, Files: s.scan.files, Stats: s.scan.stats, Virtual: s.scan.virtual}
}

// deltaIsEmpty reports whether L's tree is known to be A's: the very map
// A was recorded from, or a delta found empty for this base and scan.
func (s *session) deltaIsEmpty() bool {
	if dirstate.SameMap(s.base.Files, s.scan.files) {
		return true
	}
	e := s.emptyDelta
	return e != nil && e.base == s.base && e.scan == s.scan
}

// refDelta is s.base.delta(s.scan.files) from the recorded tree, over the
// touched and virtual paths only; ok is false when the record does not
// apply to this call.
func (s *session) refDelta() (changes, prev map[string]cas.ID, ok bool) {
	r := s.ref
	if r == nil || s.base == nil || s.base.Kept != r.Kept || s.scan == nil || !dirstate.SameStats(s.scan.stats, r.Stats) || !s.base.Exact() {
		return nil, nil, false
	}
	changes, prev = map[string]cas.ID{}, map[string]cas.ID{}
	check := func(p string) {
		cur, inL := s.scan.files[p]
		a, inA := r.Files[p] // A's, since the recorded tree was A
		if inL == inA && cur == a {
			return
		}
		changes[p] = cur
		if inA {
			prev[p] = a
		}
	}
	for _, p := range s.scan.touched {
		check(p)
	}
	for p := range s.scan.virtual {
		check(p)
	}
	for p := range r.Virtual {
		check(p)
	}
	refDeltas.Add(1)
	return changes, prev, true
}

// refDeltas counts the deltas found from a recorded tree (for tests).
var refDeltas atomic.Int64

// loadStats returns the stat cache for the session: the one the last call
// left, if P's copy is still the one it saved, else P's copy.
func (s *session) loadStats() *workdir.StatCache {
	if m := s.e.mem.Of(s.state.Path); m != nil && m.Stats != nil {
		st, at := m.Stats, m.StatsAt
		m.Stats = nil // the session owns it now; end() gives it back
		if dirstate.StatsIdentityOf(s.state.File(pstate.StatCacheFile)) == at {
			s.statsKept = &at
			return st
		}
	}
	return s.state.LoadStatCache()
}

// deferStatsSave reports whether this save of the stat cache may wait
// (long-lived engine, written recently); otherwise it notes the write.
func (s *session) deferStatsSave() bool {
	m := s.e.mem.Of(s.state.Path)
	if m == nil {
		return false
	}
	if now := time.Now(); now.Sub(m.SavedAt) >= dirstate.StatsSaveEvery {
		m.SavedAt = now
		return false
	}
	return true
}

// keepStats hands the stat cache back for the next call, once it is
// recorded in P (saveStats).
func (s *session) keepStats() {
	m := s.e.mem.Of(s.state.Path)
	switch {
	case m == nil:
	case s.statsSaved && s.scan != nil:
		m.Stats, m.StatsAt = s.scan.stats, dirstate.StatsIdentityOf(s.state.File(pstate.StatCacheFile))
	case s.scan == nil && s.statsKept != nil:
		m.Stats, m.StatsAt = s.stats, *s.statsKept // not scanned (log, history): untouched
	}
}

// listings is the Memory the session's scans use (nil: none).
func (s *session) listings() *workdir.WatchedListings {
	if m := s.e.mem.Of(s.state.Path); m != nil {
		return m.Listings
	}
	return nil
}
