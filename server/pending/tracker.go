package pending

import (
	"context"
	"encoding/hex"
	"log/slog"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// History reads the publications of the generations from..to of the
// notebook whose `current` is state (remote.Notebook.Publications).
type History interface {
	Publications(ctx context.Context, state remote.State, from, to uint64) ([]remote.Increment, error)
}

// Tracker is one call's view of a directory's pending record. Its zero
// value is not usable: New gives it the directory's records.
type Tracker struct {
	dir pstate.Dir
	log *slog.Logger

	checked  bool                  // the record was consulted this call
	onDisk   bool                  // a record may exist in P
	adopted  []pstate.PendingEntry // accepted entries applied to A
	accepted *pstate.PendingEntry  // this call's accepted publication, not yet applied to A
	contents map[cas.ID][]byte     // content of adopted bases found in no pack
}

// New is the tracker of one call on the directory whose records are dir.
func New(dir pstate.Dir, log *slog.Logger) Tracker {
	return Tracker{dir: dir, log: log}
}

// Adopt returns base with the pending record's accepted overlays applied
// (in memory only), once per call; base itself when there is nothing to
// apply. state is an observed `current`; h reads the history since base
// when `current` no longer lists an entry's publication.
func (t *Tracker) Adopt(ctx context.Context, h History, base *dirstate.Baseline, state remote.State) *dirstate.Baseline {
	if t.checked || base == nil {
		return base
	}
	t.checked = true
	rec, err := t.dir.LoadPending()
	if err != nil {
		t.log.Warn("pending publication record unreadable; ignoring it", "err", err)
	}
	if rec == nil {
		if err != nil {
			t.drop()
		}
		return base
	}
	t.onDisk = true
	if rec.BaseHead != hex.EncodeToString(base.Head[:]) || state.Manifest == nil {
		t.drop()
		return base
	}
	accepted, err := t.acceptedEntries(ctx, h, base, state, rec.Entries)
	if err != nil {
		// Not proved either way: keep the record for the next call.
		t.log.Warn("could not read the history that decides a pending publication", "err", err)
		return base
	}
	if len(accepted) == 0 {
		if undecidedV4(rec.Entries) {
			return base // may still be accepted: the next commit resumes it
		}
		t.drop() // proved absent (or no longer recorded)
		return base
	}
	orig := base
	for _, ent := range accepted {
		next, ok := t.overlayBase(base, ent)
		if !ok {
			t.drop()
			return orig
		}
		base = next
	}
	t.adopted = accepted
	t.log.Info("adopting an accepted publication interrupted before it was recorded", "publications", len(accepted))
	return base
}

// acceptedEntries returns the entries whose publication state records.
// `current` lists only the newest publications (format 2): an entry
// overtaken by more is looked up in the history since the baseline, which
// reads only the segments that range overlaps.
func (t *Tracker) acceptedEntries(ctx context.Context, h History, base *dirstate.Baseline, state remote.State, entries []pstate.PendingEntry) ([]pstate.PendingEntry, error) {
	found := make([]bool, len(entries))
	missing := false
	for i, ent := range entries {
		_, found[i] = state.Manifest.FindPublication(ent.Publication)
		missing = missing || !found[i]
	}
	if missing && state.Generation() > base.Generation {
		incs, err := h.Publications(ctx, state, base.Generation+1, state.Generation())
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

// overlayBase is base with ent's overlay applied; false if the overlay is
// malformed.
func (t *Tracker) overlayBase(base *dirstate.Baseline, ent pstate.PendingEntry) (*dirstate.Baseline, bool) {
	files, ok := t.overlaid(base, ent)
	if !ok {
		return nil, false
	}
	// The overlaid paths no longer hold the head's files: they are held
	// (non-exact), so no fast path trusts the head there and their
	// contents, in no pack, are kept in P before a rewrite needs them.
	head := base.HeadTree()
	held := map[string]cas.ID{}
	for p, id := range base.Held {
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
	return &dirstate.Baseline{Baseline: pstate.Baseline{Generation: base.Generation, Head: base.Head, Files: files, Held: held}}, true
}

// overlaid is base's files with ent's overlay applied (the contents it
// carries kept for Content); false if the overlay is malformed.
func (t *Tracker) overlaid(base *dirstate.Baseline, ent pstate.PendingEntry) (map[string]cas.ID, bool) {
	old := baseFiles(base)
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
			if t.contents == nil {
				t.contents = map[cas.ID][]byte{}
			}
			t.contents[id] = c
		}
		files[p] = id
	}
	return files, true
}

// baseFiles is base's tree (empty without a baseline).
func baseFiles(base *dirstate.Baseline) map[string]cas.ID {
	if base == nil {
		return map[string]cas.ID{}
	}
	return base.Tree()
}

// Content returns the content an adopted overlay carries for id, checked
// against id when the overlay was applied (it is in no pack).
func (t *Tracker) Content(id cas.ID) ([]byte, bool) {
	c, ok := t.contents[id]
	return c, ok
}

// Accept makes ent this call's accepted publication: its overlay is
// applied to A only when a rewrite or a resynchronisation asks for it
// (IfAccepted, AdoptAccepted).
func (t *Tracker) Accept(ent pstate.PendingEntry) {
	t.accepted = &ent
}

// IfAccepted is base's files as they are once this call's accepted
// publication is applied (nil when there is none to apply to base).
func (t *Tracker) IfAccepted(base *dirstate.Baseline) map[string]cas.ID {
	if t.accepted == nil || base == nil || base.Head != t.accepted.Base {
		return nil
	}
	files, ok := t.overlaid(base, *t.accepted)
	if !ok {
		return nil
	}
	return files
}

// AdoptAccepted returns base with this call's accepted publication
// applied, before a resynchronisation merges against it (base itself when
// there is none to apply).
func (t *Tracker) AdoptAccepted(base *dirstate.Baseline) *dirstate.Baseline {
	if t.accepted == nil || base == nil || base.Head != t.accepted.Base {
		return base
	}
	if next, ok := t.overlayBase(base, *t.accepted); ok {
		base = next
		t.adopted = append(t.adopted, *t.accepted)
	}
	t.accepted = nil
	return base
}

// Record writes the record for a publication attempt on base: the
// entries adopted this call, then ent. A P that cannot write it fails the
// attempt (the error is returned).
func (t *Tracker) Record(base *dirstate.Baseline, ent pstate.PendingEntry) error {
	rec := &pstate.PendingRecord{BaseHead: hex.EncodeToString(base.Head[:]), Entries: append(append([]pstate.PendingEntry{}, t.adopted...), ent)}
	if err := t.dir.SavePending(rec); err != nil {
		return err
	}
	t.onDisk = true
	return nil
}

// Recheck makes the next Adopt read the record again (a resumed call was
// found accepted since this call read it).
func (t *Tracker) Recheck() {
	t.checked = false
}

// Recorded is told that a baseline whose head is next was just recorded
// in P, replacing old: the record is dropped when its base is superseded,
// and the adopted entries are part of the new baseline.
func (t *Tracker) Recorded(old *dirstate.Baseline, next cas.ID) {
	if t.onDisk && (old == nil || old.Head != next) {
		t.drop() // the record's base is superseded
	}
	t.adopted = nil
}

// undecidedV4 reports whether entries hold a version-4 publication: one
// `current` does not name may still be folded by another writer.
func undecidedV4(entries []pstate.PendingEntry) bool {
	for _, ent := range entries {
		if ent.V4 {
			return true
		}
	}
	return false
}

// Undecided returns the newest entry of the pending record when it names
// a version-4 call that an earlier call of this directory registered and
// did not see decided, and the record applies to base: the commit resumes
// it (from its first version's generation), a pull settles it (by its
// newest).
func (t *Tracker) Undecided(base *dirstate.Baseline) (pstate.PendingEntry, bool) {
	rec, err := t.dir.LoadPending()
	if err != nil || rec == nil || base == nil || rec.BaseHead != hex.EncodeToString(base.Head[:]) || len(rec.Entries) == 0 {
		return pstate.PendingEntry{}, false
	}
	ent := rec.Entries[len(rec.Entries)-1]
	if !ent.V4 || !remote.IsPublicationID(ent.Publication) {
		return pstate.PendingEntry{}, false
	}
	return ent, true
}

// Forget removes id's entry from the pending record, keeping the others
// (earlier accepted publications whose overlays are still due).
func (t *Tracker) Forget(id string) {
	rec, err := t.dir.LoadPending()
	if err != nil || rec == nil {
		return
	}
	keep := rec.Entries[:0]
	for _, ent := range rec.Entries {
		if ent.Publication != id {
			keep = append(keep, ent)
		}
	}
	if len(keep) == 0 {
		t.drop()
		return
	}
	rec.Entries = keep
	if err := t.dir.SavePending(rec); err != nil {
		t.log.Warn("cannot rewrite the pending publication record", "err", err)
	}
}

// drop removes the record (a hint: failure is only logged).
func (t *Tracker) drop() {
	if err := t.dir.RemovePending(); err != nil {
		t.log.Warn("cannot remove the pending publication record", "err", err)
	}
	t.onDisk = false
}
