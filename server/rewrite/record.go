package rewrite

import (
	"bytes"
	"errors"
	"io/fs"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// The rewrite record (docs/local-state.md, invariants L1–L6): the engine's
// side. P's records of a rewrite (the next baseline and the rewrite
// record named by the recovery flag) are package pstate's
// (pstate.RewriteRecord); here they are made and settled.
//
// Settling (Settle) turns a record into one baseline, path by path,
// from what L holds: "after" takes the next baseline's base, "before" the
// recorded one. A path the caller edited after the crash holds neither;
// its content tells which one it was edited from when exactly one of the
// two readings explains it (whichVersion); otherwise its base is unknown
// and the next merge keeps both texts in one conflict block (server/plan),
// never a guess. The settled baseline is recorded durably before anything
// else happens, so a second crash starts from it and never from state
// kept in memory: records do not compose, they are settled one at a time.

// rewriteRecordFor describes the rewrite of changes towards next, with
// baseBefore the base of each path while L holds its old file.
func rewriteRecordFor(changes []plan.Change, scanned, baseBefore map[string]cas.ID, nextSum [32]byte) *pstate.RewriteRecord {
	rec := &pstate.RewriteRecord{NextSum: nextSum}
	for _, c := range changes {
		e := pstate.RewriteEntry{Path: c.Path, Before: scanned[c.Path], BaseBefore: baseBefore[c.Path]}
		if !c.Del {
			e.After = c.ID
		}
		rec.Entries = append(rec.Entries, e)
	}
	return rec
}

// keepRewriteContents saves in P (held/) the contents settling may need
// and may find in no pack: L's old content and the base recorded for it
// wherever they are not the accepted file of A's head (a local edit, the
// published local text of an accepted commit, a held base), and the new
// content where it is no file of the next head (a text merge's result).
// Such paths are few; the common rewrite (others' changes into files L did
// not edit) saves nothing.
func keepRewriteContents(s *dircall.Call, changes []plan.Change, baseBefore, next map[string]cas.ID) error {
	var head map[string]cas.ID
	if s.Base != nil {
		head = s.Base.HeadTree()
	}
	for _, c := range changes {
		if id := s.Scan.Files[c.Path]; c.Old != nil && id != head[c.Path] {
			if err := s.State.SaveHeld(id, c.Old); err != nil {
				return err
			}
		}
		if bb := baseBefore[c.Path]; !bb.IsZero() && bb != plan.UnknownBase && bb != head[c.Path] && bb != s.Scan.Files[c.Path] {
			content, err := s.Load(bb)
			if err != nil {
				return err
			}
			if err := s.State.SaveHeld(bb, content); err != nil {
				return err
			}
		}
		if !c.Del && c.ID != next[c.Path] {
			if err := s.State.SaveHeld(c.ID, c.Content); err != nil {
				return err
			}
		}
	}
	return nil
}

// Settle resolves the rewrite the recovery flag names into a
// baseline and records it (durable: the record and the flag are removed
// after it), or, when durable is false (status), only applies it to s.Base.
// The scan of L must be current. It reports whether there was a record.
func Settle(s *dircall.Call, flag *pstate.RecoveryFlag, durable bool) (bool, error) {
	if flag == nil || s.Base == nil {
		return false, nil
	}
	rec, err := s.State.LoadRewrite(flag.Rewrite)
	if err != nil {
		return false, err
	}
	var next *dirstate.Baseline
	var kept pstate.NextBaseline
	installed := false
	if rec != nil {
		if b, n, inst := s.State.LoadNextBaseline(rec.NextSum); b != nil {
			next, kept, installed = &dirstate.Baseline{Baseline: *b}, n, inst
		}
	}
	var settled *dirstate.Baseline
	switch {
	case rec == nil:
		// No record: the rewrite never started (the flag was set by a
		// failure before it: L holds what the baseline describes), or
		// its record is one this version does not read (an earlier
		// version's): any path where L differs from the baseline may be
		// that rewrite's, so its base is unknown.
		if flag.Rewrite == "" {
			settled = s.Base
			break
		}
		settled = unknownWhereChanged(s)
	case next == nil:
		// The record without its next baseline (a damaged P): every path
		// it covers has an unknown base.
		settled = unknownAt(s, rec.Entries)
	default:
		settled = settleAgainst(s, rec, next)
	}
	if !durable {
		s.Base = settled
		return true, nil
	}
	switch {
	case settled == next && installed:
		// The baseline is next already: nothing to record.
		s.Base = settled
	case settled == next:
		if err := s.State.InstallNextBaseline(next, kept); err != nil {
			return true, err
		}
		s.Base = settled
	case settled != s.Base || settled.Generation != s.Base.Generation:
		if installed {
			// The settled baseline replaces the installed next one:
			// keep next where the record finds it first, so that settling
			// again after a crash from here on gives the same result.
			if err := s.State.KeepNextBaseline(kept.Data); err != nil {
				return true, err
			}
		}
		if err := s.State.SaveBaseline(settled); err != nil {
			return true, err
		}
		s.Base = settled
	}
	if err := s.State.ClearRecovery(); err != nil {
		return true, err
	}
	s.State.RemoveRewrite()
	s.State.PruneHeld(&s.Base.Baseline)
	removeTemps(s)
	return true, nil
}

// settleAgainst is next, with each path the rewrite did not (provably)
// reach given the base L's file was made from.
func settleAgainst(s *dircall.Call, rec *pstate.RewriteRecord, next *dirstate.Baseline) *dirstate.Baseline {
	head := next.HeadTree()
	files := make(map[string]cas.ID, len(next.Tree()))
	for p, id := range next.Tree() {
		files[p] = id
	}
	held := map[string]cas.ID{}
	for p, id := range next.Held {
		held[p] = id
	}
	changed := 0
	for _, e := range rec.Entries {
		var base cas.ID
		switch cur := s.Scan.Files[e.Path]; {
		case s.Scan.Virtual[e.Path]:
			continue // never written: L ignores it
		case cur == e.After:
			continue // reached, or never needed: next's base
		case cur == e.Before:
			base = e.BaseBefore
		default:
			switch whichVersion(s, e, cur) {
			case versionBefore:
				base = e.BaseBefore
			case versionAfter:
				continue
			default:
				base = plan.UnknownBase
			}
		}
		if base == files[e.Path] {
			continue
		}
		changed++
		if base.IsZero() {
			delete(files, e.Path)
		} else {
			files[e.Path] = base
		}
		if _, ok := held[e.Path]; !ok {
			held[e.Path] = head[e.Path]
		}
	}
	s.Env.Log.Info("settled an interrupted rewrite", "paths", len(rec.Entries), "unreached", changed)
	if changed == 0 {
		return next
	}
	return &dirstate.Baseline{Baseline: pstate.Baseline{Generation: next.Generation, Head: next.Head, Files: files, Held: held}}
}

// unknownAt is s.Base with an unknown base at every path of entries.
func unknownAt(s *dircall.Call, entries []pstate.RewriteEntry) *dirstate.Baseline {
	paths := make([]string, 0, len(entries))
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	return s.Base.WithUnknown(paths)
}

// unknownWhereChanged is s.Base with an unknown base at every path where L
// differs from it (an unreadable record: any of them may be the tool's).
func unknownWhereChanged(s *dircall.Call) *dirstate.Baseline {
	changes, _ := s.Base.Delta(s.Scan.Files)
	var paths []string
	for p := range changes {
		if !s.Scan.Virtual[p] {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return s.Base
	}
	return s.Base.WithUnknown(paths)
}

type version int

const (
	versionUnknown version = iota
	versionBefore
	versionAfter
)

// whichVersion tells which of the rewrite's two files of e.Path the
// caller's edit (cur) was made from: "after" if cur holds the rewrite's
// change (merging before → after into cur changes nothing) and "before"
// if cur lacks it (merging the reverse change changes nothing), when
// exactly one of the two holds; otherwise the version cur differs less
// from. Equal differences, or a content that cannot be read: unknown.
func whichVersion(s *dircall.Call, e pstate.RewriteEntry, cur cas.ID) version {
	if cur.IsZero() || e.Before.IsZero() || e.After.IsZero() {
		return versionUnknown // a removal either way: nothing to compare
	}
	now, err1 := loadForSettle(s, cur)
	before, err2 := loadForSettle(s, e.Before)
	after, err3 := loadForSettle(s, e.After)
	if err1 != nil || err2 != nil || err3 != nil {
		return versionUnknown
	}
	holds := func(from, to []byte) bool {
		r := merge.Text(from, now, to)
		return len(r.Conflicts) == 0 && bytes.Equal(r.Content, now)
	}
	fromAfter, fromBefore := holds(before, after), holds(after, before)
	switch {
	case fromAfter && !fromBefore:
		return versionAfter
	case fromBefore && !fromAfter:
		return versionBefore
	}
	// Neither (or both) readings merge cleanly: typically the caller's
	// edit touches the lines the rewrite changed (both appended at the
	// end of a log). The version the edit is smaller against made it: an
	// edit of "before" read against "after" also undoes the rewrite's
	// change, and the other way round. Equal sizes cannot be told apart.
	ib, db := merge.Stat(before, now)
	ia, da := merge.Stat(after, now)
	switch fromBefore, fromAfter := ib+db, ia+da; {
	case fromBefore < fromAfter:
		return versionBefore
	case fromAfter < fromBefore:
		return versionAfter
	}
	return versionUnknown
}

// loadForSettle reads a content settling needs: from P's held contents
// (kept before the rewrite) or, once the chain is synced (s.Src), from
// wherever s.Load finds it. Nothing is fetched for it: what cannot be read
// leaves the path's version unknown.
func loadForSettle(s *dircall.Call, id cas.ID) ([]byte, error) {
	if c, ok := s.State.LoadHeld(id); ok {
		return c, nil
	}
	if s.Src == nil {
		return nil, cas.ErrNotFound
	}
	s.Probing = true
	defer func() { s.Probing = false }()
	return s.Load(id)
}

// removeTemps removes the temporary files an interrupted rewrite left in L.
func removeTemps(s *dircall.Call) {
	if s.Scan == nil || s.Root == nil {
		return
	}
	for _, t := range s.Scan.Temps {
		if err := s.Root.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.Env.Log.Warn("cannot remove a temporary file of an interrupted rewrite", "err", err)
		}
	}
	s.Scan.Temps = nil
}
