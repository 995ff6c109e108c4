package server

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// How ignore rules meet the accepted notebook (docs/operations.md):
//
//   - A path L ignores is left out of L's side of every merge: the scan
//     reports A's file there (a "virtual" entry), so the merge keeps the
//     accepted file as it is, whatever L holds or lacks at that path. L's
//     own file there is never read, published, deleted or overwritten, and
//     an accepted file there is never written into L.
//   - The paths of A withheld that way are recorded in P ("withheld"), so
//     that when a rule is removed a file L never received is not taken for
//     a local deletion: it stays virtual until a rewrite writes the
//     accepted version into L (restore), after which it is an ordinary
//     file. A file L holds at a withheld path no longer ignored was not
//     made from A's file there: its base is unknown (unknown.go), so it is
//     adopted when equal and kept beside the accepted text in a conflict
//     block otherwise, never published over it.

// withheldFile names the record in the directory's state.
const withheldFile = "withheld"

// scanL is scan under the engine's rules, with the virtual entries of the
// accepted files L leaves out.
func (s *session) scanWithRules() (*scanResult, error) {
	flag, err := s.state.LoadRecovery()
	if err != nil {
		return nil, err
	}
	res, err := scanWith(s.root, s.stats, scanRules{ignore: s.e.ignore, tempsOurs: flag != nil, listings: s.listings()})
	if err != nil {
		return nil, err
	}
	if s.base != nil {
		s.addVirtual(res)
	}
	return res, nil
}

// addVirtual adds A's files at the paths L ignores, and those withheld
// earlier that L still lacks, and records the withheld set when it changed.
func (s *session) addVirtual(res *scanResult) {
	old := s.state.loadWithheld()
	ign := s.e.ignore
	if ign.Empty() && len(old) == 0 {
		return
	}
	var now []string
	if !ign.Empty() && s.withheldAreIgnored(old) {
		// Only the paths the rules match (every withheld path among them):
		// known once per baseline a long-lived engine keeps, instead of a
		// walk over all of A.
		if !s.base.ignoredKnown {
			var list []pathID
			s.base.EachPath(func(p []byte, id cas.ID) {
				if ign.MayMatchBytes(p) && ign.MatchPath(string(p)) {
					list = append(list, pathID{string(p), id})
				}
			})
			s.base.learnIgnored(list)
		}
		for _, e := range s.base.ignored {
			if res.virtual == nil {
				res.virtual = map[string]bool{}
			}
			res.virtual[e.path] = true
			res.files[e.path] = e.id
			now = append(now, e.path)
		}
		res.withheld = now
		if len(now) != len(old) || !allIn(now, old) {
			if err := s.state.saveWithheld(append([]string(nil), now...)); err != nil {
				s.e.log.Warn("cannot record the withheld paths", "err", err)
			}
		}
		return
	}
	var learned []pathID // the ignored set, learned on the way
	s.base.EachPath(func(p []byte, id cas.ID) {
		if !ign.MayMatchBytes(p) && !old[string(p)] {
			return
		}
		ps := string(p)
		switch {
		case ign.MatchPath(ps):
			learned = append(learned, pathID{ps, id})
		case old[ps]:
			if _, inL := res.files[ps]; inL {
				// L holds a file the notebook's version never reached: it
				// was not made from A's file there, so its base is
				// unknown (both texts kept unless equal, never an
				// overwrite). Still withheld until a baseline records it.
				res.unknown = append(res.unknown, ps)
				now = append(now, ps)
				return
			}
			if res.restore == nil {
				res.restore = map[string]bool{}
			}
			res.restore[ps] = true
		default:
			return
		}
		if res.virtual == nil {
			res.virtual = map[string]bool{}
		}
		res.virtual[ps] = true
		res.files[ps] = id
		now = append(now, ps)
	})
	if !s.base.ignoredKnown {
		s.base.learnIgnored(learned)
	}
	res.withheld = now
	if len(now) != len(old) || !allIn(now, old) {
		if err := s.state.saveWithheld(now); err != nil {
			s.e.log.Warn("cannot record the withheld paths", "err", err)
		}
	}
}

// withheldAreIgnored reports whether every withheld path is one the rules
// match (the common case: a rule was not removed since), so the ignored
// set alone decides addVirtual. Unknown until the set is learned: then
// only with nothing withheld.
func (s *session) withheldAreIgnored(old map[string]bool) bool {
	if len(old) == 0 {
		return true
	}
	if !s.base.ignoredKnown || len(old) > len(s.base.ignored) {
		return false
	}
	n := 0
	for _, e := range s.base.ignored {
		if old[e.path] {
			n++
		}
	}
	return n == len(old)
}

func allIn(list []string, set map[string]bool) bool {
	for _, p := range list {
		if !set[p] {
			return false
		}
	}
	return true
}

// loadWithheld returns the recorded set (empty when there is none; an
// unreadable record counts as none: at worst a file L never received is
// taken for a local deletion after a rule was removed).
func (d dirState) loadWithheld() map[string]bool {
	data, err := os.ReadFile(d.File(withheldFile))
	if err != nil || len(data) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		out[string(line)] = true
	}
	return out
}

// saveWithheld records the set (one path a line; no record when empty).
// Paths never hold a newline (DESIGN §6 names).
func (d dirState) saveWithheld(paths []string) error {
	if len(paths) == 0 {
		err := os.Remove(d.File(withheldFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	sort.Strings(paths)
	return pstate.WriteAtomic(d.File(withheldFile), []byte(strings.Join(paths, "\n")+"\n"))
}

// plan is planAll without the paths L ignores (never written or removed
// in L) and with the withheld files to restore now that no rule ignores
// them (when the accepted content can be read: a pull always can).
func (s *session) plan(m *merged) ([]change, error) {
	changes, err := s.planAll(m)
	if err != nil || s.scan == nil || (s.scan.virtual == nil && s.e.ignore.Empty()) {
		return changes, err
	}
	kept := changes[:0]
	planned := map[string]bool{}
	var withheld []string
	for _, c := range changes {
		if s.e.ignore.MatchPath(c.path) {
			if !c.del && !s.scan.virtual[c.path] {
				withheld = append(withheld, c.path) // new in R: L never receives it
			}
			continue
		}
		planned[c.path] = true
		kept = append(kept, c)
	}
	changes = kept
	if len(withheld) > 0 {
		// Recorded before the rewrite: should the baseline not follow, the
		// next scan drops the entries A lacks.
		s.scan.withheld = append(s.scan.withheld, withheld...)
		if err := s.state.saveWithheld(append([]string{}, s.scan.withheld...)); err != nil {
			return nil, err
		}
	}
	if s.src == nil {
		return changes, nil
	}
	for p := range s.scan.restore {
		id, ok := m.ids[p]
		if !ok || planned[p] {
			continue
		}
		content, err := s.content(m, p)
		if err != nil {
			return nil, err
		}
		if content == nil {
			content = []byte{}
		}
		changes = append(changes, change{path: p, id: id, content: content})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].path < changes[j].path })
	return changes, nil
}
