package server

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
	"github.com/slivingdoc/slivingdoc/server/rules"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// session is one call on one visible directory, holding its locks.
type session struct {
	e     *Engine
	ctx   context.Context
	dir   string   // absolute L
	root  *os.Root // L, opened through the workspace root (nil until opened)
	state dirstate.State
	mu    *sync.Mutex
	lock  *pstate.Lock
	base  *dirstate.Baseline // nil: never pulled
	stats *workdir.StatCache
	scan  *scanResult
	src   *objcache.Source // object reads, set once the chain is synced

	inRecovery bool // a resynchronisation is running: no nested one
	lost       bool // pulled before, but the baseline is missing or corrupt

	// What a long-lived engine keeps between calls (memory.go).
	statsSaved bool                   // the stat cache is recorded, or may be kept in memory
	statsKept  *dirstate.FileIdentity // s.stats came from memory, P's copy being this

	pending pending.Tracker // the pending publication record (server/pending)

	baseFetched map[string]bool // pack keys fetched for missing base content (basefetch.go)

	// delta is L's delta from A, computed once for the checks and the
	// publication (baseDelta).
	delta      *deltaMemo
	emptyDelta *deltaMemo         // the last delta found empty (its base and scan)
	ref        *dirstate.DeltaRef // L as the last call left it (memory.go; nil: none)
	// prep is the next baseline, written ahead while the commit is
	// published (pstate.Prepared; nil: none).
	prep    *pstate.Prepared
	probing bool    // reads that only inform a decision: a base gone everywhere is no refusal
	v4      *v4Call // the version-4 publication in progress (publish_v4.go)
}

// begin starts a call on a directory: it proves the store (a cached
// verdict, normally), resolves the request path, takes the in-process and
// cross-process locks and loads the directory's private state.
func (e *Engine) begin(ctx context.Context, path string) (*session, error) {
	e.afterReply.wait()
	dir, err := e.ResolveDir(path)
	if err != nil {
		return nil, err
	}
	if dir, err = e.notebookDir(dir); err != nil {
		return nil, err
	}
	if err := e.Probe(ctx); err != nil {
		return nil, err
	}
	if err := e.checkStoreOf(dir); err != nil { // remembered.go
		return nil, err
	}
	real := rules.RealPath(dir) // once: the state's key and its "where" record
	s := &session{e: e, ctx: ctx, dir: dir, state: e.dirStateOf(dir, real)}
	s.pending = pending.New(s.state.Dir, e.log)
	s.state.Mem = e.mem.Of(s.state.Path)
	// Locks by resolved identity: a symlink alias waits for the real path.
	s.mu = e.dirLock(s.state.Path)
	s.mu.Lock()
	if s.lock, err = s.state.Lock(ctx); err != nil {
		s.mu.Unlock()
		return nil, e.fail("lock", err)
	}
	b, err := s.state.LoadBaseline()
	if errors.Is(err, pstate.ErrCorrupt) || (err == nil && b == nil && s.state.PulledBefore()) {
		// Without A, local edits cannot be told from others' changes:
		// deleted files would return and every edit become a whole-file
		// conflict. Refused instead (pull on an empty L proceeds).
		e.log.Warn("baseline lost or unreadable", "dir", dir, "err", err)
		b, err, s.lost = nil, nil, true
	}
	if err != nil {
		s.end()
		return nil, e.fail("load baseline", err)
	}
	s.base = b
	if b != nil && !s.state.PulledBefore() {
		// Pulled by an earlier version: record where now, so a later loss
		// of this baseline is told from a directory never pulled.
		if err := s.state.RecordWhere(); err != nil {
			e.log.Warn("cannot record the directory's private state marker", "err", err)
		}
	}
	s.stats = s.loadStats()
	s.ref = s.takeRef()
	return s, nil
}

func (s *session) end() {
	s.prep.Discard()
	s.prep = nil
	s.keepStats()
	s.keepRef()
	if s.root != nil {
		s.root.Close()
	}
	if err := s.lock.Release(); err != nil {
		s.e.log.Warn("releasing the directory lock", "err", err)
	}
	s.mu.Unlock()
}

// baselineLost is the refusal of an operation on a directory whose
// baseline is lost; nothing was changed.
func baselineLost() *diag.Error {
	return diag.New(diag.CodeEngineFailed, diag.ReasonBaselineLost, "", nil)
}

// emptyL reports whether L holds nothing (or does not exist yet).
func (s *session) emptyL() bool {
	if s.root == nil {
		return true
	}
	d, err := s.root.Open(".")
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(1)
	return len(names) == 0
}

// open opens L (creating it for a pull).
func (s *session) open(create bool) error {
	if s.root != nil {
		return nil
	}
	r, err := s.e.openDir(s.dir, create)
	if err != nil {
		return err
	}
	s.root = r
	return nil
}

// scanL scans L and refuses content that breaks the rules, naming every
// offending file; nothing has been changed at that point.
func (s *session) scanL() (*scanResult, error) {
	res, err := s.scanWithRules()
	if err != nil {
		return nil, s.e.fail("scan", err)
	}
	if len(res.invalid) > 0 {
		de := diag.New(diag.CodeInvalidContent, diag.ReasonInvalidFiles, "", nil)
		for _, f := range res.invalid {
			de.Files = append(de.Files, diag.FileError{Path: f.Path, Reason: f.Reason, Ranges: []merge.Range{}})
		}
		return nil, de
	}
	s.scan = res
	return res, nil
}

// baseFiles is A's tree (empty when never pulled).
func (s *session) baseFiles() map[string]cas.ID {
	if s.base == nil {
		return map[string]cas.ID{}
	}
	return s.base.Tree()
}

// verifyRefDelta makes every delta found from the recorded tree checked
// against the whole delta (set by the package's tests).
var verifyRefDelta = false

// deltaMemo is base.delta(scan.files) for one base and scan.
type deltaMemo struct {
	base          *dirstate.Baseline
	scan          *scanResult
	changes, prev map[string]cas.ID
}

// baseDelta is s.base.delta(s.scan.files), walked once per session: the
// secrets check reads it and the publication takes it (take), after
// which the next call computes it afresh (a taker may change the maps).
func (s *session) baseDelta(take bool) (changes, prev map[string]cas.ID) {
	d := s.delta
	if d == nil || d.base != s.base || d.scan != s.scan {
		var ok bool
		if changes, prev, ok = s.refDelta(); ok && verifyRefDelta {
			all, allPrev := s.base.Delta(s.scan.files)
			if !maps.Equal(all, changes) || !maps.Equal(allPrev, prev) {
				panic(fmt.Sprintf("server: the delta from the recorded tree %v %v differs from the whole delta %v %v", changes, prev, all, allPrev))
			}
		}
		if !ok {
			changes, prev = s.base.Delta(s.scan.files)
		}
		d = &deltaMemo{base: s.base, scan: s.scan, changes: changes, prev: prev}
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

// localIsBase reports whether the scanned L is A's tree.
func (s *session) localIsBase() bool {
	if s.base == nil {
		return len(s.scan.files) == 0
	}
	return s.base.SameFiles(s.scan.files)
}

func (s *session) baseHead() cas.ID {
	if s.base == nil {
		return cas.ID{}
	}
	return s.base.Head
}

// load returns the content of a file ID: from what the scan read, from
// the object cache, or by re-reading the file of L that holds it (local
// content that was never published is only in L).
func (s *session) load(id cas.ID) ([]byte, error) {
	if c, ok := s.pending.Content(id); ok {
		return c, nil
	}
	if s.base != nil && !s.base.Exact() {
		if c, ok := s.state.LoadHeld(id); ok {
			return c, nil // a held base (a checkpoint may have dropped it from the chain)
		}
	}
	if s.scan != nil {
		if c, ok := s.scan.readContent(id); ok {
			return c, nil
		}
	}
	if c, ok := s.e.recent.Get(id); ok {
		return c, nil
	}
	if s.src != nil {
		c, err := cas.ReadFile(s.src, id)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, cas.ErrNotFound) {
			return nil, err
		}
		if s.scan == nil {
			return s.refetchBase(id) // basefetch.go
		}
	}
	p := ""
	if s.scan != nil {
		p = s.scan.pathOf(id)
	}
	if p == "" {
		return s.refetchBase(id)
	}
	listed, _ := s.scan.stats.Get(p)
	c, _, reason, err := workdir.ReadChecked(s.root, p, listed)
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

// saveStats records the stat cache when it changed. It is only a cache,
// so it is not fsynced and a failure is logged, not returned.
func (s *session) saveStats() {
	if s.scan == nil || !s.scan.changed {
		s.statsSaved = s.scan != nil
		return
	}
	if s.deferStatsSave() {
		s.statsSaved = true
		return
	}
	if err := s.state.SaveStatCache(s.scan.stats); err != nil {
		s.e.log.Warn("cannot record the stat cache", "err", err)
		return
	}
	s.statsSaved = true
}

// fail maps err to a domain error and logs the cause (the only place the
// cause, which may hold private paths, is written).
func (e *Engine) fail(stage string, err error) *diag.Error {
	de := mapErr(err)
	e.storeTrouble(err)
	if errors.Is(err, context.Canceled) {
		// The caller's decision, not store trouble (mcpserver logs why).
		e.log.Info("operation cancelled", "stage", stage)
		return de
	}
	if de.Cause != nil {
		e.log.Warn("operation failed", "stage", stage, "code", string(de.Code), "reason", de.Reason, "err", de.Cause)
	}
	return de
}
