package plan

import (
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// Change is one file of L to rewrite (Content) or remove (Del).
type Change struct {
	Path    string
	ID      cas.ID
	Old     []byte // content before (nil: the file is new)
	Content []byte // content after (nil with Del)
	Del     bool
	Was     *workdir.Entry // the file's stat when it was scanned (nil: absent)
}

// Stat is the change's line delta (on-disk delta of L).
func (c *Change) Stat() (insertions, deletions int) { return merge.Stat(c.Old, c.Content) }

// Local is L as a scan read it (the zero value: no scan).
type Local struct {
	Files   map[string]cas.ID  // tree L: path → file ID
	Content map[string][]byte  // files the scan read
	Stats   *workdir.StatCache // their stats
}

// Changes compares the result with L and loads, before anything is
// touched, the old and new content of every file that changes: the
// rewrite then never needs L to be intact, and the diffstat is exact. The
// changes are sorted by path. (LeaveIgnored then leaves out the paths L
// ignores.)
func Changes(m *Merged, l Local, load merge.Loader) ([]Change, error) {
	if m.Local {
		return nil, nil // nothing to compare 10,000 paths for
	}
	var changes []Change
	for p, id := range m.IDs {
		if cur, ok := l.Files[p]; ok && cur == id {
			continue
		}
		c := Change{Path: p, ID: id}
		var err error
		if c.Content, err = m.Content(p, l, load); err != nil {
			return nil, err
		}
		if c.Content == nil {
			c.Content = []byte{}
		}
		changes = append(changes, c)
	}
	for p := range l.Files {
		if _, ok := m.IDs[p]; !ok {
			changes = append(changes, Change{Path: p, Del: true})
		}
	}
	for i := range changes {
		c := &changes[i]
		if st, ok := l.Stats.Get(c.Path); ok {
			c.Was = &st
		}
		if cur, ok := l.Files[c.Path]; ok {
			old, err := load(cur)
			if err != nil {
				return nil, err
			}
			c.Old = old
			if c.Old == nil {
				c.Old = []byte{}
			}
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, nil
}

// LeaveIgnored is changes without the paths ign matches, which are never
// written or removed in L (virtual: the paths that hold A's file in the
// scan's tree). withheld lists the files new in R at such paths: L never
// receives them, and the engine records them before it rewrites L.
func LeaveIgnored(changes []Change, ign *workdir.Ignore, virtual map[string]bool) (kept []Change, withheld []string) {
	kept = changes[:0]
	for _, c := range changes {
		if ign.MatchPath(c.Path) {
			if !c.Del && !virtual[c.Path] {
				withheld = append(withheld, c.Path) // new in R: L never receives it
			}
			continue
		}
		kept = append(kept, c)
	}
	return kept, withheld
}

// Restore adds to changes the withheld files to write into L now that no
// rule ignores them (restore, from the scan): those the result holds and
// changes does not already write. content reads a path of the result.
func Restore(changes []Change, restore map[string]bool, m *Merged, content func(p string) ([]byte, error)) ([]Change, error) {
	planned := make(map[string]bool, len(changes))
	for _, c := range changes {
		planned[c.Path] = true
	}
	for p := range restore {
		id, ok := m.IDs[p]
		if !ok || planned[p] {
			continue
		}
		c, err := content(p)
		if err != nil {
			return nil, err
		}
		if c == nil {
			c = []byte{}
		}
		changes = append(changes, Change{Path: p, ID: id, Content: c})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, nil
}
