package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"
	"sync"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
)

// change is one file of L to rewrite (content) or remove (del).
type change struct {
	path    string
	id      cas.ID
	old     []byte // content before (nil: the file is new)
	content []byte // content after (nil with del)
	del     bool
	was     *statEntry // the file's stat when it was scanned (nil: absent)
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
	tr, err := merge.Trees(s.baseFiles(), s.scan.files, rFiles, s.load)
	if err != nil {
		return nil, err
	}
	m := &merged{ids: make(map[string]cas.ID, len(tr.Files)), contents: map[string][]byte{}, conflicts: tr.Conflicts}
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
		if st, ok := s.scan.stats[c.path]; ok {
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

// apply rewrites L towards next: the rewrite record and the recovery flag
// first, then removals (and the
// directories they empty), then each new content written to a temporary
// sibling, fsynced and renamed over its target. The stat cache is updated
// with what was written; entries stay untrusted until a later scan.
func (s *session) apply(changes []change, flag recoveryFlag, next *baseline) error {
	if len(changes) == 0 && len(s.scan.temps) == 0 {
		return nil
	}
	flag.Stage = "rewrite"
	sum, err := s.state.saveRewrite(s.rewriteRecordFor(changes, next))
	if err != nil {
		return &notStarted{err}
	}
	flag.Rewrite = sum
	if err := failpoint(FailAfterRewriteRecord); err != nil {
		return &notStarted{err}
	}
	if err := s.state.setRecovery(flag); err != nil {
		return &notStarted{err}
	}
	if err := failpoint(FailAfterRecoveryFlag); err != nil {
		return err
	}
	for _, t := range s.scan.temps {
		if err := s.root.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	s.scan.temps = nil
	s.scan.changed = true
	s.scan.byID = nil // rebuilt from the rewritten tree on demand
	for _, c := range changes {
		if !c.del {
			continue
		}
		if _, err := unchangedSince(s.root, c.path, c.was); err != nil {
			return err
		}
		if err := s.root.Remove(c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		delete(s.scan.files, c.path)
		delete(s.scan.stats, c.path)
		delete(s.scan.content, c.path)
		s.pruneEmpty(path.Dir(c.path))
	}
	return s.writeAll(changes)
}

// notStarted wraps a failure that happened before L was touched.
type notStarted struct{ err error }

func (n *notStarted) Error() string { return n.err.Error() }
func (n *notStarted) Unwrap() error { return n.err }

// writeParallel bounds concurrent file writes: enough for the file
// system to group their fsyncs into few journal commits.
const writeParallel = 8

// writeAll writes every non-deleted change. Each directory is opened once
// (through s.root) and files are written by a few workers in parallel; the
// directories are fsynced at the end so the renames are durable before the
// baseline is recorded.
func (s *session) writeAll(changes []change) error {
	var writes []*change
	dirs := map[string]*os.Root{}
	for i := range changes {
		if c := &changes[i]; !c.del {
			writes = append(writes, c)
			dirs[path.Dir(c.path)] = nil
		}
	}
	defer func() {
		for d, r := range dirs {
			if r != nil && d != "." {
				r.Close()
			}
		}
	}()
	for _, d := range sortedKeys(dirs) {
		r, err := s.openWriteDir(d)
		if err != nil {
			return err
		}
		dirs[d] = r
	}
	// Phase 1, in parallel: each new content goes to a temporary sibling.
	// With many files one syncfs replaces a fsync per file (whose journal
	// commits would serialise the creates).
	batch := len(writes) >= syncfsMin && canSyncFS
	tmps := make([]string, len(writes))
	defer func() {
		for i, t := range tmps {
			if t != "" {
				dirs[path.Dir(writes[i].path)].Remove(t)
			}
		}
	}()
	// Workers take whole directories: creates in one directory serialise
	// on its lock in the kernel, and contending for it only burns CPU.
	var groups [][]int
	byDir := map[string]int{}
	for i, c := range writes {
		d := path.Dir(c.path)
		g, ok := byDir[d]
		if !ok {
			g = len(groups)
			byDir[d] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	for range min(writeParallel, len(groups)) {
		wg.Go(func() {
			for {
				mu.Lock()
				if first != nil || next >= len(groups) {
					mu.Unlock()
					return
				}
				group := groups[next]
				next++
				mu.Unlock()
				for _, i := range group {
					c := writes[i]
					tmp, err := stageLeaf(dirs[path.Dir(c.path)], path.Base(c.path), c.content, c.was, !batch)
					mu.Lock()
					tmps[i] = tmp
					if err != nil && first == nil {
						first = err
					}
					stop := first != nil
					mu.Unlock()
					if stop {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	if batch {
		if err := syncFS(s.root); err != nil {
			return err
		}
	}
	// Phase 2: rename each over its target, checking first that nobody
	// changed the target since the scan.
	for i, c := range writes {
		r := dirs[path.Dir(c.path)]
		name := path.Base(c.path)
		if _, err := unchangedSince(r, name, c.was); err != nil {
			return err
		}
		if err := r.Rename(tmps[i], name); err != nil {
			return err
		}
		tmps[i] = ""
		fi, err := r.Lstat(name)
		if err != nil {
			return err
		}
		st := statOf(fi)
		st.ID = c.id
		st.Markers = len(merge.ScanMarkers(c.content)) > 0
		st.path = c.path
		s.scan.files[c.path] = c.id
		s.scan.stats[c.path] = st
		s.scan.content[c.path] = c.content
		if i == 0 {
			if err := failpoint(FailMidRewrite); err != nil {
				return err
			}
		}
	}
	for _, r := range dirs {
		if err := syncRootDir(r); err != nil {
			return err
		}
	}
	return failpoint(FailAfterRewrite)
}

// syncfsMin is the number of files from which one file-system flush is
// cheaper than a fsync per file.
const syncfsMin = 16

// openWriteDir opens (creating) directory d of L for writing files into.
func (s *session) openWriteDir(d string) (*os.Root, error) {
	if d == "." {
		return s.root, nil
	}
	if err := s.root.MkdirAll(d, 0o777); err != nil {
		return nil, err
	}
	return s.root.OpenRoot(d)
}

// unchangedSince refuses to replace or remove a file that someone changed
// (or created) after the scan: the rewrite would otherwise drop that edit.
// The caller turns the error into a recovery, which merges the edit in.
// It returns what stands at name (nil: nothing).
func unchangedSince(r *os.Root, name string, was *statEntry) (fs.FileInfo, error) {
	fi, err := r.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		if was != nil {
			return nil, errChangedDuringScan
		}
		return fi, nil // an empty directory, not state (stageLeaf removes it)
	case was == nil || !sameStat(statOf(fi), *was):
		return nil, errChangedDuringScan
	}
	return fi, nil
}

// stageLeaf writes content to a new temporary sibling of name in r (with
// the permissions of the file it will replace) and returns its name. It
// fsyncs the file unless the caller flushes the file system afterwards.
func stageLeaf(r *os.Root, name string, content []byte, was *statEntry, fsync bool) (string, error) {
	fi, err := unchangedSince(r, name, was)
	if err != nil {
		return "", err
	}
	perm := fs.FileMode(0o666)
	if fi != nil {
		switch {
		case fi.Mode().IsRegular():
			perm = fi.Mode().Perm()
		case fi.IsDir():
			// An empty directory (not state) stands where a file goes.
			if err := r.Remove(name); err != nil {
				return "", err
			}
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := tempPrefix + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", err
	}
	_, err = f.Write(content)
	if err == nil && fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// pruneEmpty removes dir and its parents while they are empty (never L).
func (s *session) pruneEmpty(dir string) {
	for dir != "." && dir != "/" && dir != "" {
		if s.root.Remove(dir) != nil {
			return
		}
		dir = path.Dir(dir)
	}
}

// syncRootDir makes the renames in directory r durable.
func syncRootDir(r *os.Root) error {
	d, err := r.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return dirSyncErr(d.Sync())
}
