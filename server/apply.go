package server

import (
	"errors"
	"io/fs"
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// change is one file of L to rewrite (content) or remove (del).
type change struct {
	path    string
	id      cas.ID
	old     []byte // content before (nil: the file is new)
	content []byte // content after (nil with del)
	del     bool
	was     *workdir.Entry // the file's stat when it was scanned (nil: absent)
}

// merged is a merge result as the operations use it: the file ID of every
// path, the content of files a text merge produced, and the conflicts.
type merged struct {
	local     bool // ids is the scan's own map: the result is L as it is
	ids       map[string]cas.ID
	contents  map[string][]byte
	conflicts []merge.Conflict
}

// mergeWith merges A, L and R (rHead, rFiles). The common cases skip the
// tree merge: R == A yields L (a commit with no concurrent change), L == A
// yields R (a pull with no local change).
func (s *session) mergeWith(rHead cas.ID, rFiles map[string]cas.ID) (*merged, error) {
	if rHead == s.baseHead() && s.base.exact() {
		return &merged{ids: s.scan.files, local: true}, nil
	}
	if s.localIsBase() {
		return &merged{ids: rFiles}, nil
	}
	m := &merged{ids: map[string]cas.ID{}, contents: map[string][]byte{}}
	base, local, remote, err := s.mergeUnknown(m, s.baseFiles(), s.scan.files, rFiles)
	if err != nil {
		return nil, err
	}
	tr, err := merge.Trees(base, local, remote, s.load)
	if err != nil {
		return nil, err
	}
	m.conflicts = append(tr.Conflicts, m.conflicts...)
	sort.Slice(m.conflicts, func(i, j int) bool { return m.conflicts[i].Path < m.conflicts[j].Path })
	for p, ent := range tr.Files {
		id := ent.ID
		if id.IsZero() {
			if id, err = cas.WriteFile(nil, ent.Content); err != nil {
				return nil, err
			}
			m.contents[p] = ent.Content
		}
		m.ids[p] = id
	}
	return m, nil
}

// content returns the content of path p of the result.
func (s *session) content(m *merged, p string) ([]byte, error) {
	if c, ok := m.contents[p]; ok {
		return c, nil
	}
	id := m.ids[p]
	if s.scan != nil && s.scan.files[p] == id { // L's own file, often just read
		if c, ok := s.scan.content[p]; ok {
			return c, nil
		}
	}
	return s.load(id)
}

// planAll compares the result with L and loads, before anything is touched,
// the old and new content of every file that changes: the rewrite then
// never needs L to be intact, and the diffstat is exact. (plan, in
// ignore_state.go, leaves out the paths L ignores.)
func (s *session) planAll(m *merged) ([]change, error) {
	if m.local {
		return nil, nil // nothing to compare 10,000 paths for
	}
	var changes []change
	for p, id := range m.ids {
		if cur, ok := s.scan.files[p]; ok && cur == id {
			continue
		}
		c := change{path: p, id: id}
		var err error
		if c.content, err = s.content(m, p); err != nil {
			return nil, err
		}
		if c.content == nil {
			c.content = []byte{}
		}
		changes = append(changes, c)
	}
	for p := range s.scan.files {
		if _, ok := m.ids[p]; !ok {
			changes = append(changes, change{path: p, del: true})
		}
	}
	for i := range changes {
		c := &changes[i]
		if st, ok := s.scan.stats.Get(c.path); ok {
			c.was = &st
		}
		if cur, ok := s.scan.files[c.path]; ok {
			old, err := s.load(cur)
			if err != nil {
				return nil, err
			}
			c.old = old
			if c.old == nil {
				c.old = []byte{}
			}
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].path < changes[j].path })
	return changes, nil
}

// diffstat is the per-file line delta of changes (on-disk delta of L).
func diffstat(changes []change) []FileStat {
	out := []FileStat{}
	for _, c := range changes {
		ins, del := merge.Stat(c.old, c.content)
		out = append(out, FileStat{Path: c.path, Insertions: ins, Deletions: del})
	}
	return out
}

// apply rewrites L towards next, after recording what settling needs
// should it be interrupted (rewrite_record.go): the next baseline, the
// contents only L holds, the rewrite record and the recovery flag. Then
// removals (and the directories they empty), then each new content written
// to a temporary sibling, fsynced and renamed over its target. It returns
// the next baseline's encoding, for installNextBaseline. The stat cache is
// updated with what was written; entries stay untrusted until a later scan.
func (s *session) apply(changes []change, flag pstate.RecoveryFlag, next *baseline, baseBefore map[string]cas.ID) ([]byte, error) {
	if err := s.state.RecordWhere(); err != nil {
		return nil, &notStarted{err}
	}
	sum, data, err := s.state.SaveNextBaseline(&next.Baseline, next.prepared)
	if err != nil {
		return nil, &notStarted{err}
	}
	if err := s.keepRewriteContents(changes, baseBefore, next.Tree()); err != nil {
		return nil, &notStarted{err}
	}
	flag.Stage = "rewrite"
	if flag.Rewrite, err = s.state.SaveRewrite(rewriteRecordFor(changes, s.scan.files, baseBefore, sum)); err != nil {
		return nil, &notStarted{err}
	}
	if err := failpoint(FailAfterRewriteRecord); err != nil {
		return nil, &notStarted{err}
	}
	if err := s.state.SetRecovery(flag); err != nil {
		return nil, &notStarted{err}
	}
	if err := failpoint(FailAfterRecoveryFlag); err != nil {
		return nil, err
	}
	for _, t := range s.scan.temps {
		if err := s.root.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	s.scan.temps = nil
	s.scan.changed = true
	s.scan.byID = nil // rebuilt from the rewritten tree on demand
	for _, c := range changes {
		if !c.del {
			continue
		}
		if err := workdir.RemoveFile(s.root, c.path, c.was); err != nil {
			return nil, err
		}
		delete(s.scan.files, c.path)
		s.scan.stats.Delete(c.path)
		delete(s.scan.content, c.path)
	}
	return data, s.writeAll(changes)
}

// notStarted wraps a failure that happened before L was touched.
type notStarted struct{ err error }

func (n *notStarted) Error() string { return n.err.Error() }
func (n *notStarted) Unwrap() error { return n.err }

// writeAll writes every non-deleted change (workdir.WriteFiles) and
// records each written file in the scan, as L now holds it.
func (s *session) writeAll(changes []change) error {
	var writes []workdir.Write
	var of []int // index in changes of each write
	for i := range changes {
		if c := &changes[i]; !c.del {
			writes = append(writes, workdir.Write{Path: c.path, Content: c.content, Was: c.was})
			of = append(of, i)
		}
	}
	err := workdir.WriteFiles(s.root, writes, func(i int, st workdir.Entry) error {
		c := &changes[of[i]]
		st.ID = c.id
		st.Markers = len(merge.ScanMarkers(c.content)) > 0
		st.Key = c.path
		s.scan.files[c.path] = c.id
		s.scan.stats.Set(c.path, st)
		s.scan.content[c.path] = c.content
		if i == 0 {
			return failpoint(FailMidRewrite)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return failpoint(FailAfterRewrite)
}
