package dircall

import (
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// The call's side of what a long-lived engine keeps of each L between
// calls (server/dirstate's Memory, whose doc says what is kept and why it
// is sound): taking it at the start of a call and handing it back at the end.

// takeRef hands the recorded tree to the call (nil: none); End()
// records the next one.
func (s *Call) takeRef() *dirstate.DeltaRef {
	m := s.Env.Memories.Of(s.State.Path)
	if m == nil {
		return nil
	}
	r := m.Ref
	m.Ref = nil
	return r
}

// keepRef records L as this call leaves it, when that is A.
func (s *Call) keepRef() {
	m := s.Env.Memories.Of(s.State.Path)
	if m == nil || s.Base == nil || s.Base.Kept == nil || m.Base != s.Base.Kept || m.Stats == nil {
		return
	}
	if s.Scan == nil {
		// Not scanned (log, history): L's record stands if A does.
		if r := s.ref; r != nil && r.Kept == s.Base.Kept && dirstate.SameStats(r.Stats, m.Stats) {
			m.Ref = r
		}
		return
	}
	if !dirstate.SameStats(s.Scan.Stats, m.Stats) || !s.deltaIsEmpty() {
		return
	}
	m.Ref = &dirstate.DeltaRef{Kept: s.Base.Kept, Files: s.Scan.Files, Stats: s.Scan.Stats, Virtual: s.Scan.Virtual}
}

// deltaIsEmpty reports whether L's tree is known to be A's: the very map
// A was recorded from, or a delta found empty for this base and scan.
func (s *Call) deltaIsEmpty() bool {
	if dirstate.SameMap(s.Base.Files, s.Scan.Files) {
		return true
	}
	e := s.emptyDelta
	return e != nil && e.base == s.Base && e.scan == s.Scan
}

// refDelta is s.Base.delta(s.Scan.Files) from the recorded tree, over the
// touched and virtual paths only; ok is false when the record does not
// apply to this call.
func (s *Call) refDelta() (changes, prev map[string]cas.ID, ok bool) {
	r := s.ref
	if r == nil || s.Base == nil || s.Base.Kept != r.Kept || s.Scan == nil || !dirstate.SameStats(s.Scan.Stats, r.Stats) || !s.Base.Exact() {
		return nil, nil, false
	}
	changes, prev = map[string]cas.ID{}, map[string]cas.ID{}
	check := func(p string) {
		cur, inL := s.Scan.Files[p]
		a, inA := r.Files[p] // A's, since the recorded tree was A
		if inL == inA && cur == a {
			return
		}
		changes[p] = cur
		if inA {
			prev[p] = a
		}
	}
	for _, p := range s.Scan.Touched {
		check(p)
	}
	for p := range s.Scan.Virtual {
		check(p)
	}
	for p := range r.Virtual {
		check(p)
	}
	RefDeltas.Add(1)
	return changes, prev, true
}

// RefDeltas counts the deltas found from a recorded tree (for tests).
var RefDeltas atomic.Int64

// loadStats returns the stat cache for the call: the one the last call
// left, if P's copy is still the one it saved, else P's copy.
func (s *Call) loadStats() *workdir.StatCache {
	if m := s.Env.Memories.Of(s.State.Path); m != nil && m.Stats != nil {
		st, at := m.Stats, m.StatsAt
		m.Stats = nil // the call owns it now; End() gives it back
		if dirstate.StatsIdentityOf(s.State.File(pstate.StatCacheFile)) == at {
			s.statsKept = &at
			return st
		}
	}
	return s.State.LoadStatCache()
}

// deferStatsSave reports whether this save of the stat cache may wait
// (long-lived engine, written recently); otherwise it notes the write.
func (s *Call) deferStatsSave() bool {
	m := s.Env.Memories.Of(s.State.Path)
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
func (s *Call) keepStats() {
	m := s.Env.Memories.Of(s.State.Path)
	switch {
	case m == nil:
	case s.statsSaved && s.Scan != nil:
		m.Stats, m.StatsAt = s.Scan.Stats, dirstate.StatsIdentityOf(s.State.File(pstate.StatCacheFile))
	case s.Scan == nil && s.statsKept != nil:
		m.Stats, m.StatsAt = s.Stats, *s.statsKept // not scanned (log, history): untouched
	}
}

// listings is the Memory the call's scans use (nil: none).
func (s *Call) listings() *workdir.WatchedListings {
	if m := s.Env.Memories.Of(s.State.Path); m != nil {
		return m.Listings
	}
	return nil
}
