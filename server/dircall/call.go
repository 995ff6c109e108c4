package dircall

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/pending"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// Call is one call on one visible directory, holding its locks.
type Call struct {
	Env   *Env
	Ctx   context.Context
	Dir   string   // absolute L
	Root  *os.Root // L, opened through the workspace root (nil until opened)
	State dirstate.State
	mu    *sync.Mutex
	lock  *pstate.Lock
	Base  *dirstate.Baseline // nil: never pulled
	Stats *workdir.StatCache
	Scan  *Scan
	Src   *objcache.Source // object reads, set once the chain is synced

	InRecovery bool // a resynchronisation is running: no nested one
	Lost       bool // pulled before, but the baseline is missing or corrupt

	// What a long-lived engine keeps between calls (memory.go).
	statsSaved bool                   // the stat cache is recorded, or may be kept in memory
	statsKept  *dirstate.FileIdentity // s.Stats came from memory, P's copy being this

	Pending pending.Tracker // the pending publication record (server/pending)

	baseFetched map[string]bool // pack keys fetched for missing base content (basefetch.go)

	// delta is L's delta from A, computed once for the checks and the
	// publication (BaseDelta).
	delta      *deltaMemo
	emptyDelta *deltaMemo         // the last delta found empty (its base and scan)
	ref        *dirstate.DeltaRef // L as the last call left it (memory.go; nil: none)
	Probing    bool               // reads that only inform a decision: a base gone everywhere is no refusal
}

// Open starts a call on directory dir, whose records are st (st.Mem
// already taken): it takes mu, the engine's in-process mutex of the
// directory, and the lock file in P, and loads A and the stat cache. A
// baseline that is lost or unreadable is no error: the call is Lost.
func Open(env *Env, ctx context.Context, dir string, st dirstate.State, mu *sync.Mutex) (*Call, error) {
	s := &Call{Env: env, Ctx: ctx, Dir: dir, State: st, Pending: pending.New(st.Dir, env.Log)}
	// Locks by resolved identity: a symlink alias waits for the real path.
	s.mu = mu
	s.mu.Lock()
	var err error
	if s.lock, err = s.State.Lock(ctx); err != nil {
		s.mu.Unlock()
		return nil, env.Fail("lock", err)
	}
	b, err := s.State.LoadBaseline()
	if errors.Is(err, pstate.ErrCorrupt) || (err == nil && b == nil && s.State.PulledBefore()) {
		// Without A, local edits cannot be told from others' changes:
		// deleted files would return and every edit become a whole-file
		// conflict. Refused instead (pull on an empty L proceeds).
		env.Log.Warn("baseline lost or unreadable", "dir", dir, "err", err)
		b, err, s.Lost = nil, nil, true
	}
	if err != nil {
		s.End()
		return nil, env.Fail("load baseline", err)
	}
	s.Base = b
	if b != nil && !s.State.PulledBefore() {
		// Pulled by an earlier version: record where now, so a later loss
		// of this baseline is told from a directory never pulled.
		if err := s.State.RecordWhere(); err != nil {
			env.Log.Warn("cannot record the directory's private state marker", "err", err)
		}
	}
	s.Stats = s.loadStats()
	s.ref = s.takeRef()
	return s, nil
}

// End hands back what a long-lived engine keeps (the stat cache once
// recorded, then L's tree), closes L and releases the locks.
func (s *Call) End() {
	s.keepStats()
	s.keepRef()
	if s.Root != nil {
		s.Root.Close()
	}
	if err := s.lock.Release(); err != nil {
		s.Env.Log.Warn("releasing the directory lock", "err", err)
	}
	s.mu.Unlock()
}

// EmptyL reports whether L holds nothing (or does not exist yet).
func (s *Call) EmptyL() bool {
	if s.Root == nil {
		return true
	}
	d, err := s.Root.Open(".")
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(1)
	return len(names) == 0
}

// OpenL opens L (creating it for a pull) through the workspace root:
// everything the call does inside L goes through the returned root. Its
// refusals are catalogued (PathErr).
func (s *Call) OpenL(create bool) error {
	if s.Root != nil {
		return nil
	}
	r, err := s.Env.Workspace.Open(s.Dir, create)
	if err != nil {
		return PathErr(err)
	}
	s.Root = r
	return nil
}

// ScanL scans L and refuses content that breaks the rules, naming every
// offending file; nothing has been changed at that point.
func (s *Call) ScanL() (*Scan, error) {
	res, err := s.ScanWithRules()
	if err != nil {
		return nil, s.Env.Fail("scan", err)
	}
	if len(res.Invalid) > 0 {
		de := diag.New(diag.CodeInvalidContent, diag.ReasonInvalidFiles, "", nil)
		for _, f := range res.Invalid {
			de.Files = append(de.Files, diag.FileError{Path: f.Path, Reason: f.Reason, Ranges: []merge.Range{}})
		}
		return nil, de
	}
	s.Scan = res
	return res, nil
}

// BaseFiles is A's tree (empty when never pulled).
func (s *Call) BaseFiles() map[string]cas.ID {
	if s.Base == nil {
		return map[string]cas.ID{}
	}
	return s.Base.Tree()
}

// VerifyRefDelta makes every delta found from the recorded tree checked
// against the whole delta (set by the package's tests).
var VerifyRefDelta = false

// deltaMemo is base.delta(scan.files) for one base and scan.
type deltaMemo struct {
	base          *dirstate.Baseline
	scan          *Scan
	changes, prev map[string]cas.ID
}

// BaseDelta is s.Base.delta(s.Scan.Files), walked once per call: the
// secrets check reads it and the publication takes it (take), after
// which the next call computes it afresh (a taker may change the maps).
func (s *Call) BaseDelta(take bool) (changes, prev map[string]cas.ID) {
	d := s.delta
	if d == nil || d.base != s.Base || d.scan != s.Scan {
		var ok bool
		if changes, prev, ok = s.refDelta(); ok && VerifyRefDelta {
			all, allPrev := s.Base.Delta(s.Scan.Files)
			if !maps.Equal(all, changes) || !maps.Equal(allPrev, prev) {
				panic(fmt.Sprintf("server: the delta from the recorded tree %v %v differs from the whole delta %v %v", changes, prev, all, allPrev))
			}
		}
		if !ok {
			changes, prev = s.Base.Delta(s.Scan.Files)
		}
		d = &deltaMemo{base: s.Base, scan: s.Scan, changes: changes, prev: prev}
		if len(changes) == 0 {
			s.emptyDelta = d
		}
	}
	s.delta = d
	if take {
		s.delta = nil
	}
	return d.changes, d.prev
}

// LocalIsBase reports whether the scanned L is A's tree.
func (s *Call) LocalIsBase() bool {
	if s.Base == nil {
		return len(s.Scan.Files) == 0
	}
	return s.Base.SameFiles(s.Scan.Files)
}

func (s *Call) BaseHead() cas.ID {
	if s.Base == nil {
		return cas.ID{}
	}
	return s.Base.Head
}

// Load returns the content of a file ID: from what the scan read, from
// the object cache, or by re-reading the file of L that holds it (local
// Content that was never published is only in L).
func (s *Call) Load(id cas.ID) ([]byte, error) {
	if c, ok := s.Pending.Content(id); ok {
		return c, nil
	}
	if s.Base != nil && !s.Base.Exact() {
		if c, ok := s.State.LoadHeld(id); ok {
			return c, nil // a held base (a checkpoint may have dropped it from the chain)
		}
	}
	if s.Scan != nil {
		if c, ok := s.Scan.ReadContent(id); ok {
			return c, nil
		}
	}
	if c, ok := s.Env.Recent.Get(id); ok {
		return c, nil
	}
	if s.Src != nil {
		c, err := cas.ReadFile(s.Src, id)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, cas.ErrNotFound) {
			return nil, err
		}
		if s.Scan == nil {
			return s.refetchBase(id) // basefetch.go
		}
	}
	p := ""
	if s.Scan != nil {
		p = s.Scan.PathOf(id)
	}
	if p == "" {
		return s.refetchBase(id)
	}
	listed, _ := s.Scan.Stats.Get(p)
	c, _, reason, err := workdir.ReadChecked(s.Root, p, listed)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		return nil, workdir.ErrChangedDuringScan
	}
	if got, err := cas.WriteFile(nil, c); err != nil || got != id {
		return nil, workdir.ErrChangedDuringScan
	}
	return c, nil
}

// SaveStats records the stat cache when it changed. It is only a cache,
// so it is not fsynced and a failure is logged, not returned.
func (s *Call) SaveStats() {
	if s.Scan == nil || !s.Scan.Changed {
		s.statsSaved = s.Scan != nil
		return
	}
	if s.deferStatsSave() {
		s.statsSaved = true
		return
	}
	if err := s.State.SaveStatCache(s.Scan.Stats); err != nil {
		s.Env.Log.Warn("cannot record the stat cache", "err", err)
		return
	}
	s.statsSaved = true
}
