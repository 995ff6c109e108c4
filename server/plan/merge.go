package plan

import (
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
)

// Merged is a merge result as the operations use it: the file ID of every
// path, the content of files a text merge produced, and the conflicts.
type Merged struct {
	Local     bool // IDs is the scan's own map: the result is L as it is
	IDs       map[string]cas.ID
	Contents  map[string][]byte
	Conflicts []merge.Conflict
}

// Merge merges A (base), L (local) and R (remote) by path. The paths in
// unknown, whose base is unknown, are decided instead of merged
// (unknown.go); their conflicts are reported with the tree merge's, sorted
// by path. The engine takes the common cases before it: R == A yields L,
// L == A yields R.
func Merge(base, local, remote map[string]cas.ID, unknown []string, load merge.Loader) (*Merged, error) {
	m := &Merged{IDs: map[string]cas.ID{}, Contents: map[string][]byte{}}
	base, local, remote, err := decideUnknown(m, unknown, base, local, remote, load)
	if err != nil {
		return nil, err
	}
	tr, err := merge.Trees(base, local, remote, load)
	if err != nil {
		return nil, err
	}
	m.Conflicts = append(tr.Conflicts, m.Conflicts...)
	sort.Slice(m.Conflicts, func(i, j int) bool { return m.Conflicts[i].Path < m.Conflicts[j].Path })
	for p, ent := range tr.Files {
		id := ent.ID
		if id.IsZero() {
			if id, err = cas.WriteFile(nil, ent.Content); err != nil {
				return nil, err
			}
			m.Contents[p] = ent.Content
		}
		m.IDs[p] = id
	}
	return m, nil
}

// Content returns the content of path p of the result: one the merge
// produced, L's own file when the scan read it, else the object's.
func (m *Merged) Content(p string, l Local, load merge.Loader) ([]byte, error) {
	if c, ok := m.Contents[p]; ok {
		return c, nil
	}
	id := m.IDs[p]
	if l.Files != nil && l.Files[p] == id { // L's own file, often just read
		if c, ok := l.Content[p]; ok {
			return c, nil
		}
	}
	return load(id)
}
