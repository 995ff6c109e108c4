package commit

import (
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/pull"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// The checks a commit makes before its first write. Each only reads
// (L as the call's scan read it, A, the object caches) and returns a
// catalogued error or nil; they run in a fixed order (CheckMessage,
// by the engine, before the call starts; then, in Run once L is
// scanned, refuseMarkers, refuseSecrets in secrets.go, refuseReadOnly),
// so a refused commit publishes nothing and changes nothing. The one
// exception is the documented one: refuseReadOnly resets the refused
// files to A, through the engine's rewrite of L, before it reports them.

// CheckMessage refuses a commit message that breaks the input rules
// (rules.CheckMessageText): blank, or not UTF-8 without U+0000 within
// its size bound.
func CheckMessage(m string) *diag.Error {
	switch rules.CheckMessageText(m) {
	case rules.MessageOK:
		return nil
	case rules.MessageBlank:
		return diag.InvalidRequest(diag.ReasonBlankMessage, "")
	default:
		return diag.InvalidRequest(diag.ReasonInvalidArgument, "message must be UTF-8 without U+0000, at most 16,384 bytes.")
	}
}

// refuseMarkers refuses a commit while any file of L holds a complete
// conflict block, listing each file and block range.
func refuseMarkers(s *dircall.Call) error {
	files := s.Scan.MarkerFiles()
	if len(files) == 0 {
		return nil
	}
	de := diag.New(diag.CodeContentConflict, diag.ReasonUnresolvedMarkers, "", nil)
	for _, p := range files {
		content, err := s.Load(s.Scan.Files[p])
		if err != nil {
			return s.Env.Fail("read conflicted file", err)
		}
		ranges := merge.ScanMarkers(content)
		if len(ranges) == 0 {
			continue // the cached flag was stale: no complete block now
		}
		de.Files = append(de.Files, diag.FileError{Path: p, Reason: diag.FileConflictMarkers, Ranges: ranges})
	}
	if len(de.Files) == 0 {
		return nil
	}
	return de
}

// pathReason is a path set's refusal (package server/rules) as its
// READ_ONLY_PATH file reason; "" for Allowed. A switch, not a map: a map
// literal is built at package initialisation, in every process.
func pathReason(r rules.Refusal) string {
	switch r {
	case rules.InsideReadOnly:
		return diag.ReasonInsideReadOnly
	case rules.OutsideWritable:
		return diag.ReasonOutsideWritable
	}
	return ""
}

// refuseReadOnly refuses a commit that changes files outside the writable
// set or inside the read-only set, resetting exactly those files to the
// accepted baseline content (rewritten as a pull rewrites L, with its
// recovery on failure: pull.Materialise); other local edits stay in L.
func refuseReadOnly(s *dircall.Call) error {
	if s.Env.Sets.Empty() {
		return nil
	}
	base := s.BaseFiles()
	var refused []diag.FileError
	check := func(p string) {
		if reason := pathReason(s.Env.Sets.Check(p)); reason != "" {
			refused = append(refused, diag.FileError{Path: p, Reason: reason, Ranges: []merge.Range{}})
		}
	}
	for p, id := range s.Scan.Files {
		if base[p] != id { // changed or added
			check(p)
		}
	}
	for p := range base {
		if _, ok := s.Scan.Files[p]; !ok { // removed
			check(p)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	sort.Slice(refused, func(i, j int) bool { return refused[i].Path < refused[j].Path })
	// Resetting needs the baseline's content: make sure the cache holds
	// the accepted chain (a refusal is not on the fast path).
	state, err := s.Env.Notebook.ReadCurrent(s.Ctx)
	if err != nil {
		return s.Env.Fail("read current", err)
	}
	chain, err := s.Env.Sync(s.Ctx, state)
	if err != nil {
		return err
	}
	s.Src = s.Env.Caches.Source(chain)
	target := &plan.Merged{IDs: make(map[string]cas.ID, len(s.Scan.Files))}
	for p, id := range s.Scan.Files {
		target.IDs[p] = id
	}
	reason := diag.ReasonOutsideWritable
	for _, f := range refused {
		if id, ok := base[f.Path]; ok {
			target.IDs[f.Path] = id
		} else {
			delete(target.IDs, f.Path)
		}
		if f.Reason == diag.ReasonInsideReadOnly {
			reason = diag.ReasonInsideReadOnly
		}
	}
	changes, err := s.Plan(target)
	if err != nil {
		return s.Env.Fail("plan reset", err)
	}
	if err := pull.Materialise(s, changes, pstate.RecoveryFlag{Op: "reset", RemoteAccepted: "no", Generation: s.Base.Generation}, s.Base, false); err != nil {
		return err
	}
	de := diag.New(diag.CodeReadOnlyPath, reason, "", nil)
	de.Files = refused
	return de
}
