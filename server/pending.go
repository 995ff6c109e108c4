package server

import (
	"encoding/hex"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// Pending publications (the record itself, its format and file, is
// pstate.PendingRecord). A commit can be accepted by the store and then
// interrupted (killed, disk full) before L and the baseline A are updated.
// A then predates the accepted publication, and merge(A, L, R) would see
// the writer's own published lines as added on both sides — a conflict
// with itself as soon as L is edited next to them.
//
// So before each publication attempt P records, without fsync (losing the
// record only degrades to that conflict; a P that cannot write it fails
// the commit before anything is published), the attempt's publication ID and
// its overlay: each path the scanned L changed relative to A, with L's
// file ID, and L's content where M text-merged it with others' changes
// (then M minus that content is exactly the others' changes; the content
// is in no pack). On the next call, if `current` holds the publication,
// the merge base is A with the overlay applied: L's published changes are
// then common to both sides, and edits made after the crash still merge as
// local changes. A record whose
// publication `current` does not hold, or whose base is not A's head, is
// dropped. Recording a baseline with another head removes the record.
//
// The record keeps earlier accepted entries, so a second interrupted
// commit on top of an adopted one does not forget the first.

// adoptPublished applies the pending record's accepted overlays to s.Base
// (in memory only), once per session. state is an observed `current`.
func (s *session) adoptPublished(state remote.State) {
	if s.pendingChecked || s.Base == nil {
		return
	}
	s.pendingChecked = true
	rec, err := s.State.LoadPending()
	if err != nil {
		s.Env.Log.Warn("pending publication record unreadable; ignoring it", "err", err)
	}
	if rec == nil {
		if err != nil {
			s.dropPending()
		}
		return
	}
	s.pendingOnDisk = true
	if rec.BaseHead != hex.EncodeToString(s.Base.Head[:]) || state.Manifest == nil {
		s.dropPending()
		return
	}
	accepted, err := s.acceptedEntries(state, rec.Entries)
	if err != nil {
		// Not proved either way: keep the record for the next call.
		s.Env.Log.Warn("could not read the history that decides a pending publication", "err", err)
		return
	}
	if len(accepted) == 0 {
		if undecidedV4(rec.Entries) {
			return // may still be accepted: the next commit resumes it
		}
		s.dropPending() // proved absent (or no longer recorded)
		return
	}
	orig := s.Base
	for _, ent := range accepted {
		if !s.overlayBase(ent) {
			s.Base = orig
			s.dropPending()
			return
		}
	}
	s.adopted = accepted
	s.Env.Log.Info("adopting an accepted publication interrupted before it was recorded", "publications", len(accepted))
}

// acceptedEntries returns the entries whose publication state records.
// `current` lists only the newest publications (format 2): an entry
// overtaken by more is looked up in the history since the baseline, which
// reads only the segments that range overlaps.
func (s *session) acceptedEntries(state remote.State, entries []pstate.PendingEntry) ([]pstate.PendingEntry, error) {
	found := make([]bool, len(entries))
	missing := false
	for i, ent := range entries {
		_, found[i] = state.Manifest.FindPublication(ent.Publication)
		missing = missing || !found[i]
	}
	if missing && state.Generation() > s.Base.Generation {
		incs, err := s.Env.Notebook.Publications(s.Ctx, state, s.Base.Generation+1, state.Generation())
		if err != nil {
			return nil, err
		}
		published := make(map[string]bool, len(incs))
		for _, inc := range incs {
			published[inc.Publication] = true
		}
		for i, ent := range entries {
			found[i] = found[i] || published[ent.Publication]
		}
	}
	var accepted []pstate.PendingEntry
	for i, ent := range entries {
		if found[i] {
			accepted = append(accepted, ent)
		}
	}
	return accepted, nil
}

// overlayBase replaces s.Base by A with ent's overlay applied; false if
// the overlay is malformed (then s.Base is unchanged).
func (s *session) overlayBase(ent pstate.PendingEntry) bool {
	files, ok := s.overlaid(ent)
	if !ok {
		return false
	}
	// The overlaid paths no longer hold the head's files: they are held
	// (non-exact), so no fast path trusts the head there and their
	// contents, in no pack, are kept in P before a rewrite needs them.
	head := s.Base.HeadTree()
	held := map[string]cas.ID{}
	for p, id := range s.Base.Held {
		held[p] = id
	}
	for p := range ent.Overlay {
		if _, ok := held[p]; !ok && files[p] != head[p] {
			held[p] = head[p]
		}
	}
	if len(held) == 0 {
		held = nil
	}
	s.Base = &dirstate.Baseline{Baseline: pstate.Baseline{Generation: s.Base.Generation, Head: s.Base.Head, Files: files, Held: held}}
	return true
}

// overlaid is A's files with ent's overlay applied (the contents it
// carries kept for s.Load); false if the overlay is malformed.
func (s *session) overlaid(ent pstate.PendingEntry) (map[string]cas.ID, bool) {
	old := s.BaseFiles()
	files := make(map[string]cas.ID, len(old)+len(ent.Overlay))
	for p, id := range old {
		files[p] = id
	}
	for p, h := range ent.Overlay {
		if h == "" {
			delete(files, p)
			continue
		}
		id, err := cas.ParseID(h)
		if err != nil || id.IsZero() {
			return nil, false
		}
		if c, ok := ent.Bases[p]; ok {
			if got, err := cas.WriteFile(nil, c); err != nil || got != id {
				return nil, false
			}
			if s.BaseContent == nil {
				s.BaseContent = map[cas.ID][]byte{}
			}
			s.BaseContent[id] = c
		}
		files[p] = id
	}
	return files, true
}

// baseIfAccepted is A's files as they are once this session's accepted
// publication is applied (A's own when there is none to apply).
func (s *session) baseIfAccepted() map[string]cas.ID {
	if s.accepted == nil || s.Base == nil || s.Base.Head != s.accepted.Base {
		return nil
	}
	files, ok := s.overlaid(*s.accepted)
	if !ok {
		return nil
	}
	return files
}

// adoptAccepted applies this session's accepted publication to s.Base
// before a resynchronisation merges against it.
func (s *session) adoptAccepted() {
	if s.accepted == nil || s.Base == nil || s.Base.Head != s.accepted.Base {
		return
	}
	if s.overlayBase(*s.accepted) {
		s.adopted = append(s.adopted, *s.accepted)
	}
	s.accepted = nil
}

// recordPending writes the record for a publication attempt whose
// proposed tree is ids, built from the scanned L against s.Base; or, when
// the proposal is L itself, whose delta from s.Base is local (zero ID:
// removed). It returns the new entry (kept for adoption in this session
// once accepted).
func (s *session) recordPending(publication string, ids, local map[string]cas.ID) (pstate.PendingEntry, error) {
	ent := pstate.PendingEntry{Publication: publication, Overlay: map[string]string{}, Base: s.Base.Head}
	if s.v4 != nil {
		ent.V4, ent.First, ent.Last = true, s.v4.first, s.v4.last
	}
	if ids == nil {
		for p, id := range local {
			if id.IsZero() {
				ent.Overlay[p] = ""
			} else {
				ent.Overlay[p] = hex.EncodeToString(id[:])
			}
		}
	} else {
		base := s.BaseFiles()
		for p, id := range s.Scan.Files {
			if base[p] == id {
				continue
			}
			m, inM := ids[p]
			if !inM {
				continue
			}
			if m != id {
				c, err := s.Content(&plan.Merged{IDs: s.Scan.Files}, p)
				if err != nil {
					continue // A stays the base of p: at worst a conflict
				}
				if ent.Bases == nil {
					ent.Bases = map[string][]byte{}
				}
				ent.Bases[p] = c
			}
			ent.Overlay[p] = hex.EncodeToString(id[:])
		}
		for p := range base {
			if _, inL := s.Scan.Files[p]; !inL {
				if _, inM := ids[p]; !inM {
					ent.Overlay[p] = ""
				}
			}
		}
	}
	rec := &pstate.PendingRecord{BaseHead: hex.EncodeToString(s.Base.Head[:]), Entries: append(append([]pstate.PendingEntry{}, s.adopted...), ent)}
	if err := s.State.SavePending(rec); err != nil {
		return pstate.PendingEntry{}, err
	}
	s.pendingOnDisk = true
	return ent, nil
}

// dropPending removes the record (a hint: failure is only logged).
func (s *session) dropPending() {
	if err := s.State.RemovePending(); err != nil {
		s.Env.Log.Warn("cannot remove the pending publication record", "err", err)
	}
	s.pendingOnDisk = false
}
