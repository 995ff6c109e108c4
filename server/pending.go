package server

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Pending publications. A commit can be accepted by the store and then
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

// pendingRecord is P/dirs/<h>/pending.
type pendingRecord struct {
	BaseHead string         `json:"baseHead"` // hex of A's head the overlays apply to
	Entries  []pendingEntry `json:"entries"`
}

// pendingEntry is one publication's overlay: path → hex file ID, "" for a
// path the publication removed.
type pendingEntry struct {
	Publication string            `json:"publication"`
	Overlay     map[string]string `json:"overlay"`
	// Bases holds L's content of each path the publication text-merged
	// with others' changes: that content is the right base for the next
	// merge (M minus it is exactly the others' changes), and it is in no
	// pack, since M's merged content was published instead.
	Bases map[string][]byte `json:"bases,omitempty"`
	// V4 (format version 4, publish_v4.go): the publication registered
	// proposals, the first built on generation First. A proposal stays
	// foldable after its writer dies, so an entry `current` does not name
	// yet is undecided, not absent: it is kept, and the next commit
	// resumes the publication under its ID (publish.Publisher.Resume).
	V4    bool   `json:"v4,omitempty"`
	First uint64 `json:"first,omitempty"`
	// Last is the generation the newest version was built on (a record
	// without it: First). A version is registered only once the one
	// before it can no longer be folded, so Last alone says whether the
	// call is still undecided (pull_v4.go).
	Last uint64 `json:"last,omitempty"`

	baseHead cas.ID // the head of the base the overlay applies to (not encoded)
}

func (d dirState) loadPending() (*pendingRecord, error) {
	data, err := os.ReadFile(d.file("pending"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r pendingRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, errBadStateFile
	}
	return &r, nil
}

// pendingSpare is the file the pending record is written through and
// removed into: a commit writes the record and removes it again, and
// through a spare it does so without creating or freeing an inode (about
// 150 µs of CPU each on an ext4 disk that frees inodes often). Never read;
// the record, like every record of the directory, is read and written
// only under the directory's lock (osfile.WriteSpare).
const pendingSpare = ".pending.spare"

func (d dirState) savePending(r *pendingRecord) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		return err
	}
	return osfile.WriteSpare(d.file("pending"), d.file(pendingSpare), 0o600, false, data)
}

// removePending removes the record by renaming it to the spare, which the
// next savePending writes over.
func (d dirState) removePending() error {
	crashpoint.Hit(cpRemoveState, "pending")
	err := os.Rename(d.file("pending"), d.file(pendingSpare))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// adoptPublished applies the pending record's accepted overlays to s.base
// (in memory only), once per session. state is an observed `current`.
func (s *session) adoptPublished(state remote.State) {
	if s.pendingChecked || s.base == nil {
		return
	}
	s.pendingChecked = true
	rec, err := s.state.loadPending()
	if err != nil {
		s.e.log.Warn("pending publication record unreadable; ignoring it", "err", err)
	}
	if rec == nil {
		if err != nil {
			s.dropPending()
		}
		return
	}
	s.pendingOnDisk = true
	if rec.BaseHead != hex.EncodeToString(s.base.Head[:]) || state.Manifest == nil {
		s.dropPending()
		return
	}
	accepted, err := s.acceptedEntries(state, rec.Entries)
	if err != nil {
		// Not proved either way: keep the record for the next call.
		s.e.log.Warn("could not read the history that decides a pending publication", "err", err)
		return
	}
	if len(accepted) == 0 {
		if undecidedV4(rec.Entries) {
			return // may still be accepted: the next commit resumes it
		}
		s.dropPending() // proved absent (or no longer recorded)
		return
	}
	orig := s.base
	for _, ent := range accepted {
		if !s.overlayBase(ent) {
			s.base = orig
			s.dropPending()
			return
		}
	}
	s.adopted = accepted
	s.e.log.Info("adopting an accepted publication interrupted before it was recorded", "publications", len(accepted))
}

// acceptedEntries returns the entries whose publication state records.
// `current` lists only the newest publications (format 2): an entry
// overtaken by more is looked up in the history since the baseline, which
// reads only the segments that range overlaps.
func (s *session) acceptedEntries(state remote.State, entries []pendingEntry) ([]pendingEntry, error) {
	found := make([]bool, len(entries))
	missing := false
	for i, ent := range entries {
		_, found[i] = state.Manifest.FindPublication(ent.Publication)
		missing = missing || !found[i]
	}
	if missing && state.Generation() > s.base.Generation {
		incs, err := s.e.notebook.Publications(s.ctx, state, s.base.Generation+1, state.Generation())
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
	var accepted []pendingEntry
	for i, ent := range entries {
		if found[i] {
			accepted = append(accepted, ent)
		}
	}
	return accepted, nil
}

// overlayBase replaces s.base by A with ent's overlay applied; false if
// the overlay is malformed (then s.base is unchanged).
func (s *session) overlayBase(ent pendingEntry) bool {
	files, ok := s.overlaid(ent)
	if !ok {
		return false
	}
	// The overlaid paths no longer hold the head's files: they are held
	// (non-exact), so no fast path trusts the head there and their
	// contents, in no pack, are kept in P before a rewrite needs them.
	head := s.base.headFiles()
	held := map[string]cas.ID{}
	for p, id := range s.base.Held {
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
	s.base = &baseline{Generation: s.base.Generation, Head: s.base.Head, Files: files, Held: held}
	return true
}

// overlaid is A's files with ent's overlay applied (the contents it
// carries kept for s.load); false if the overlay is malformed.
func (s *session) overlaid(ent pendingEntry) (map[string]cas.ID, bool) {
	old := s.baseFiles()
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
			if s.baseContent == nil {
				s.baseContent = map[cas.ID][]byte{}
			}
			s.baseContent[id] = c
		}
		files[p] = id
	}
	return files, true
}

// baseIfAccepted is A's files as they are once this session's accepted
// publication is applied (A's own when there is none to apply).
func (s *session) baseIfAccepted() map[string]cas.ID {
	if s.accepted == nil || s.base == nil || s.base.Head != s.accepted.baseHead {
		return nil
	}
	files, ok := s.overlaid(*s.accepted)
	if !ok {
		return nil
	}
	return files
}

// adoptAccepted applies this session's accepted publication to s.base
// before a resynchronisation merges against it.
func (s *session) adoptAccepted() {
	if s.accepted == nil || s.base == nil || s.base.Head != s.accepted.baseHead {
		return
	}
	if s.overlayBase(*s.accepted) {
		s.adopted = append(s.adopted, *s.accepted)
	}
	s.accepted = nil
}

// recordPending writes the record for a publication attempt whose
// proposed tree is ids, built from the scanned L against s.base; or, when
// the proposal is L itself, whose delta from s.base is local (zero ID:
// removed). It returns the new entry (kept for adoption in this session
// once accepted).
func (s *session) recordPending(publication string, ids, local map[string]cas.ID) (pendingEntry, error) {
	ent := pendingEntry{Publication: publication, Overlay: map[string]string{}, baseHead: s.base.Head}
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
		base := s.baseFiles()
		for p, id := range s.scan.files {
			if base[p] == id {
				continue
			}
			m, inM := ids[p]
			if !inM {
				continue
			}
			if m != id {
				c, err := s.content(&merged{ids: s.scan.files}, p)
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
			if _, inL := s.scan.files[p]; !inL {
				if _, inM := ids[p]; !inM {
					ent.Overlay[p] = ""
				}
			}
		}
	}
	rec := &pendingRecord{BaseHead: hex.EncodeToString(s.base.Head[:]), Entries: append(append([]pendingEntry{}, s.adopted...), ent)}
	if err := s.state.savePending(rec); err != nil {
		return pendingEntry{}, err
	}
	s.pendingOnDisk = true
	return ent, nil
}

// dropPending removes the record (a hint: failure is only logged).
func (s *session) dropPending() {
	if err := s.state.removePending(); err != nil {
		s.e.log.Warn("cannot remove the pending publication record", "err", err)
	}
	s.pendingOnDisk = false
}
