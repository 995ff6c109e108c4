package plan

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
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

// PathID is one file of a tree.
type PathID struct {
	Path string
	ID   cas.ID
}

// Accepted is A as the ignore state reads it: every path of the baseline,
// and its files at the paths the rules match when known (Known), learned
// once per baseline a long-lived engine keeps instead of walked on every
// call. Learn records the set once AddVirtual walked A for it.
type Accepted struct {
	*pstate.Baseline
	Ignored []PathID
	Known   bool
	Learn   func([]PathID)
}

// Virtual is what the ignore state adds to a scan of L.
type Virtual struct {
	Paths    map[string]bool // paths of files that are A's, not read from L
	Restore  map[string]bool // virtual paths to write into L at the next rewrite
	Withheld []string        // A's paths L does not hold because of a rule (as recorded in P)
	Unknown  []string        // withheld paths no rule ignores now, where L holds a file: their base is unknown
}

// AddVirtual adds to files, the tree of L a scan read, A's files at the
// paths ign ignores, and those withheld earlier that L still lacks, and
// records the withheld set in dir when it changed (a failure to record it
// is passed to warn: at worst a file L never received is later taken for
// a local deletion).
func AddVirtual(dir pstate.Dir, a Accepted, ign *workdir.Ignore, files map[string]cas.ID, warn func(error)) Virtual {
	var v Virtual
	old := loadWithheld(dir)
	if ign.Empty() && len(old) == 0 {
		return v
	}
	var now []string
	if !ign.Empty() && withheldAreIgnored(a, old) {
		// Only the paths the rules match (every withheld path among them):
		// known once per baseline a long-lived engine keeps, instead of a
		// walk over all of A.
		if !a.Known {
			var list []PathID
			a.EachPath(func(p []byte, id cas.ID) {
				if ign.MayMatchBytes(p) && ign.MatchPath(string(p)) {
					list = append(list, PathID{string(p), id})
				}
			})
			a.Learn(list)
			a.Ignored = list
		}
		for _, e := range a.Ignored {
			if v.Paths == nil {
				v.Paths = map[string]bool{}
			}
			v.Paths[e.Path] = true
			files[e.Path] = e.ID
			now = append(now, e.Path)
		}
		v.Withheld = now
		if len(now) != len(old) || !allIn(now, old) {
			if err := SaveWithheld(dir, append([]string(nil), now...)); err != nil {
				warn(err)
			}
		}
		return v
	}
	var learned []PathID // the ignored set, learned on the way
	a.EachPath(func(p []byte, id cas.ID) {
		if !ign.MayMatchBytes(p) && !old[string(p)] {
			return
		}
		ps := string(p)
		switch {
		case ign.MatchPath(ps):
			learned = append(learned, PathID{ps, id})
		case old[ps]:
			if _, inL := files[ps]; inL {
				// L holds a file the notebook's version never reached: it
				// was not made from A's file there, so its base is
				// unknown (both texts kept unless equal, never an
				// overwrite). Still withheld until a baseline records it.
				v.Unknown = append(v.Unknown, ps)
				now = append(now, ps)
				return
			}
			if v.Restore == nil {
				v.Restore = map[string]bool{}
			}
			v.Restore[ps] = true
		default:
			return
		}
		if v.Paths == nil {
			v.Paths = map[string]bool{}
		}
		v.Paths[ps] = true
		files[ps] = id
		now = append(now, ps)
	})
	if !a.Known {
		a.Learn(learned)
	}
	v.Withheld = now
	if len(now) != len(old) || !allIn(now, old) {
		if err := SaveWithheld(dir, now); err != nil {
			warn(err)
		}
	}
	return v
}

// withheldAreIgnored reports whether every withheld path is one the rules
// match (the common case: a rule was not removed since), so the ignored
// set alone decides AddVirtual. Unknown until the set is learned: then
// only with nothing withheld.
func withheldAreIgnored(a Accepted, old map[string]bool) bool {
	if len(old) == 0 {
		return true
	}
	if !a.Known || len(old) > len(a.Ignored) {
		return false
	}
	n := 0
	for _, e := range a.Ignored {
		if old[e.Path] {
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

// loadWithheld returns the set recorded in dir (empty when there is none;
// an unreadable record counts as none: at worst a file L never received is
// taken for a local deletion after a rule was removed).
func loadWithheld(dir pstate.Dir) map[string]bool {
	data, err := os.ReadFile(dir.File(withheldFile))
	if err != nil || len(data) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		out[string(line)] = true
	}
	return out
}

// SaveWithheld records the set in dir (one path a line, sorted in place;
// no record when empty). Paths never hold a newline (the notebook's names
// exclude it).
func SaveWithheld(dir pstate.Dir, paths []string) error {
	if len(paths) == 0 {
		err := os.Remove(dir.File(withheldFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	sort.Strings(paths)
	return pstate.WriteAtomic(dir.File(withheldFile), []byte(strings.Join(paths, "\n")+"\n"))
}
