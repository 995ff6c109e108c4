package build

import (
	"encoding/hex"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// record writes the pending-publication record. A P that cannot hold it
// could not record the baseline either: publishing then would leave the
// accepted change for the next merge to meet as a conflict, so nothing is
// published.
func (a *Attempt) record() error {
	var err error
	if a.localDelta() {
		// The proposal is L itself and Changes is L's delta from A: no
		// need to compare 10,000 paths again.
		a.Pend, err = a.recordPending(nil, a.Changes)
	} else {
		a.Pend, err = a.recordPending(a.Merged.IDs, nil)
	}
	return err
}

// recordPending writes the record for a publication attempt whose
// proposed tree is ids, built from the scanned L against the call's A;
// or, when the proposal is L itself, whose delta from A is local (zero
// ID: removed). It returns the new entry (kept for adoption in this call
// once accepted). The call's pending.Tracker writes it, after the
// entries adopted before it.
func (a *Attempt) recordPending(ids, local map[string]cas.ID) (pstate.PendingEntry, error) {
	s := a.c
	ent := pstate.PendingEntry{Publication: a.Publication, Overlay: map[string]string{}, Base: s.Base.Head}
	ent.V4, ent.First, ent.Last = true, a.v4.First, a.v4.Last
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
	if err := s.Pending.Record(s.Base, ent); err != nil {
		return pstate.PendingEntry{}, err
	}
	return ent, nil
}
