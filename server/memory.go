package server

import (
	"bytes"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// What a long-lived engine (Config.LongLived: serve) keeps of each L
// between calls, so that a call on an unchanged notebook costs what it
// must, not what a fresh process pays:
//   - the listings of L's directories, reused while an inotify watch
//     proves them unchanged (workdir.WatchedListings, whose doc says why that is
//     sound);
//   - the stat cache as the last call left it, used instead of reading
//     and decoding P's copy while that file is the one the call left
//     there (same size, mtime, change time and inode), and written to P
//     at most every statsSaveEvery. Each entry is a fact
//     (this stat means this content) that the scan checks against L, so
//     even a copy another process replaced in the same timestamp tick
//     could cost re-reads, never a wrong tree; another process's copy is
//     taken as soon as the identity differs.
//
//   - the baseline last read or written, reused while P's file is proved
//     to be that one (keptBaseline below).
//
// The recovery flag and the pending record are read from P on every call,
// as before (each costs one open that fails when there is none): another
// process may have committed the same directory, and they decide what is
// merged. The store client and the
// open chain caches already live as long as the Engine.

// maxMemories bounds the directories remembered (each holds an inotify
// instance and one watch per directory).
const maxMemories = 16

// dirMemory is what is kept of one L (by its private state directory).
type dirMemory struct {
	listings *workdir.WatchedListings
	stats    *workdir.StatCache // nil: none kept (in use by a session, or never saved)
	statsAt  fileIdentity
	savedAt  time.Time     // when the stat cache was last written to P
	base     *keptBaseline // the baseline last read or written (nil: none)
	ref      *deltaRef     // L as the last call left it, when that was A (nil: none)
}

// deltaRef is L's tree as the last call left it (files, with the stat
// cache it left beside it), recorded only when that tree was exactly A,
// the kept baseline. The next call's delta from A then needs only the
// paths its scan touched (workdir.Listing.Touched), provided that call's
// A is the same kept baseline and its scan started from the same stat
// cache, untouched since: every other path of the new tree has its
// stat-cache entry's ID, which is the ID it had in files, which is A's.
// Anything else (another process's baseline or stat cache, a call that
// failed) computes the delta over every path, as a fresh process does.
type deltaRef struct {
	kept    *keptBaseline
	files   map[string]cas.ID
	stats   *workdir.StatCache
	virtual map[string]bool // the virtual paths of files (A's at the paths L ignores)
}

// takeRef hands the recorded tree to the session (nil: none); end()
// records the next one.
func (s *session) takeRef() *deltaRef {
	m := s.e.memoryOf(s.state.Path)
	if m == nil {
		return nil
	}
	r := m.ref
	m.ref = nil
	return r
}

// keepRef records L as this call leaves it, when that is A.
func (s *session) keepRef() {
	m := s.e.memoryOf(s.state.Path)
	if m == nil || s.base == nil || s.base.kept == nil || m.base != s.base.kept || m.stats == nil {
		return
	}
	if s.scan == nil {
		// Not scanned (log, history): L's record stands if A does.
		if r := s.ref; r != nil && r.kept == s.base.kept && sameStats(r.stats, m.stats) {
			m.ref = r
		}
		return
	}
	if !sameStats(s.scan.stats, m.stats) || !s.deltaIsEmpty() {
		return
	}
	m.ref = &deltaRef{kept: s.base.kept, files: s.scan.files, stats: s.scan.stats, virtual: s.scan.virtual}
}

// deltaIsEmpty reports whether L's tree is known to be A's: the very map
// A was recorded from, or a delta found empty for this base and scan.
func (s *session) deltaIsEmpty() bool {
	if sameMap(s.base.Files, s.scan.files) {
		return true
	}
	e := s.emptyDelta
	return e != nil && e.base == s.base && e.scan == s.scan
}

// refDelta is s.base.delta(s.scan.files) from the recorded tree, over the
// touched and virtual paths only; ok is false when the record does not
// apply to this call.
func (s *session) refDelta() (changes, prev map[string]cas.ID, ok bool) {
	r := s.ref
	if r == nil || s.base == nil || s.base.kept != r.kept || s.scan == nil || !sameStats(s.scan.stats, r.stats) || !s.base.exact() {
		return nil, nil, false
	}
	changes, prev = map[string]cas.ID{}, map[string]cas.ID{}
	check := func(p string) {
		cur, inL := s.scan.files[p]
		a, inA := r.files[p] // A's, since the recorded tree was A
		if inL == inA && cur == a {
			return
		}
		changes[p] = cur
		if inA {
			prev[p] = a
		}
	}
	for _, p := range s.scan.touched {
		check(p)
	}
	for p := range s.scan.virtual {
		check(p)
	}
	for p := range r.virtual {
		check(p)
	}
	refDeltas.Add(1)
	return changes, prev, true
}

// refDeltas counts the deltas found from a recorded tree (for tests).
var refDeltas atomic.Int64

// sameStats reports whether a and b are one cache (not merely equal ones).
func sameStats(a, b *workdir.StatCache) bool {
	return a != nil && a == b
}

// statsSaveEvery is how often a long-lived engine writes the stat cache
// to P (it writes it at most this often and keeps it in memory between):
// a 10,000-file cache is about a megabyte to encode and write on every
// commit. P's copy is for the next process, which at worst re-reads the
// files changed since it was written.
const statsSaveEvery = 2 * time.Second

// fileIdentity is what tells one version of a file in P from another.
type fileIdentity struct {
	exists             bool
	size, mtime, ctime int64
	ino, dev           uint64
	sum                [32]byte // the stat cache's checksum (statsIdentityOf); zero otherwise
}

func identityOf(p string) fileIdentity {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileIdentity{}
	}
	st := workdir.StatOf(fi)
	return fileIdentity{exists: true, size: st.Size, mtime: st.Mtime, ctime: st.Ctime, ino: st.Ino, dev: st.Dev}
}

// statsIdentityOf is the stat cache's identity: its file's, and the
// checksum that ends it. The file is overwritten in place when its length
// is unchanged (saveStatCache), which keeps the inode and the size, and
// may keep the times when two writes fall in one tick of the file
// system's clock; the checksum, over the whole content, still tells two
// versions apart.
func statsIdentityOf(p string) fileIdentity {
	id := identityOf(p)
	if !id.exists || id.size < 32 {
		return id
	}
	f, err := os.Open(p)
	if err != nil {
		return fileIdentity{}
	}
	defer f.Close()
	if _, err := f.ReadAt(id.sum[:], id.size-32); err != nil {
		return fileIdentity{}
	}
	return id
}

// memoryOf returns what is kept of the L whose state is in stateDir (nil
// unless the engine is long-lived).
func (e *Engine) memoryOf(stateDir string) *dirMemory {
	if !e.longLived {
		return nil
	}
	e.memMu.Lock()
	defer e.memMu.Unlock()
	m := e.memories[stateDir]
	if m == nil {
		if len(e.memories) >= maxMemories {
			for k, old := range e.memories { // any one: a host uses few directories
				old.listings.Close()
				delete(e.memories, k)
				break
			}
		}
		m = &dirMemory{listings: workdir.NewWatchedListings()}
		e.memories[stateDir] = m
	}
	return m
}

// closeMemories releases every watch (Engine.Close).
func (e *Engine) closeMemories() {
	e.memMu.Lock()
	defer e.memMu.Unlock()
	for k, m := range e.memories {
		m.listings.Close()
		delete(e.memories, k)
	}
}

// loadStats returns the stat cache for the session: the one the last call
// left, if P's copy is still the one it saved, else P's copy.
func (s *session) loadStats() *workdir.StatCache {
	if m := s.e.memoryOf(s.state.Path); m != nil && m.stats != nil {
		st, at := m.stats, m.statsAt
		m.stats = nil // the session owns it now; end() gives it back
		if statsIdentityOf(s.state.File(pstate.StatCacheFile)) == at {
			s.statsKept = &at
			return st
		}
	}
	return s.state.LoadStatCache()
}

// deferStatsSave reports whether this save of the stat cache may wait
// (long-lived engine, written recently); otherwise it notes the write.
func (s *session) deferStatsSave() bool {
	m := s.e.memoryOf(s.state.Path)
	if m == nil {
		return false
	}
	if now := time.Now(); now.Sub(m.savedAt) >= statsSaveEvery {
		m.savedAt = now
		return false
	}
	return true
}

// keepStats hands the stat cache back for the next call, once it is
// recorded in P (saveStats).
func (s *session) keepStats() {
	m := s.e.memoryOf(s.state.Path)
	switch {
	case m == nil:
	case s.statsSaved && s.scan != nil:
		m.stats, m.statsAt = s.scan.stats, statsIdentityOf(s.state.File(pstate.StatCacheFile))
	case s.scan == nil && s.statsKept != nil:
		m.stats, m.statsAt = s.stats, *s.statsKept // not scanned (log, history): untouched
	}
}

// listings is the Memory the session's scans use (nil: none).
func (s *session) listings() *workdir.WatchedListings {
	if m := s.e.memoryOf(s.state.Path); m != nil {
		return m.listings
	}
	return nil
}

// The baseline kept between calls. Reading and checking P's copy costs a
// read and a BLAKE3 of about 700 KB at 10,000 files on every call; a
// long-lived engine reuses the bytes it last read or wrote while P's file
// is still that one. That is proved, not assumed, on every call under the
// directory lock: the open file must have the identity recorded (size,
// mtime, change time, inode: a writer replaces the file by rename, so
// another process's baseline is a new inode) and end in the same 32-byte
// checksum, which is the BLAKE3 of everything before it. Any difference,
// or any doubt, reads P's copy as a fresh process would.

// keptBaseline is a decoded baseline (entries undecoded) and its file.
// Its ignored set (baseline.ignored) is learned by the first call that
// needs it and then shared by every later copy: it depends only on the
// entries, which never change, and on the engine's rules, which are
// fixed for the engine's life.
type keptBaseline struct {
	b   *baseline
	sum []byte // the file's last 32 bytes
	at  fileIdentity
}

// keepBaseline remembers data, the content of the open baseline file f,
// with what from (nil: nothing) already knows of it (its ignored set),
// and returns what it kept (nil: nothing).
func (m *dirMemory) keepBaseline(f *os.File, data []byte, from *baseline) *keptBaseline {
	if m == nil {
		return nil
	}
	m.base = nil
	fi, err := f.Stat()
	if err != nil || fi.Size() != int64(len(data)) {
		return nil
	}
	rec, err := pstate.ParseBaseline(data, false)
	if err != nil {
		return nil
	}
	b := &baseline{Baseline: *rec}
	if from != nil && from.ignoredKnown {
		b.ignored, b.ignoredKnown = from.ignored, true
	}
	st := workdir.StatOf(fi)
	m.base = &keptBaseline{b: b, sum: data[len(data)-32:],
		at: fileIdentity{exists: true, size: st.Size, mtime: st.Mtime, ctime: st.Ctime, ino: st.Ino, dev: st.Dev}}
	return m.base
}

// learnIgnored records b's ignored set in the memory b came from, for the
// calls after this one.
func (b *baseline) learnIgnored(list []plan.PathID) {
	b.ignored, b.ignoredKnown = list, true
	if b.kept != nil {
		b.kept.b.ignored, b.kept.b.ignoredKnown = list, true
	}
}

// ignoredAfter is the ignored set of the baseline that is b with changes
// applied (each path's new ID, zero: removed), derived from b's without
// walking every path; ok is false when b's is not known.
func (b *baseline) ignoredAfter(changes map[string]cas.ID, match func(string) bool) (list []plan.PathID, ok bool) {
	if !b.ignoredKnown {
		return nil, false
	}
	for _, e := range b.ignored {
		if _, changed := changes[e.Path]; !changed {
			list = append(list, e)
		}
	}
	for p, id := range changes {
		if !id.IsZero() && match(p) {
			list = append(list, plan.PathID{Path: p, ID: id})
		}
	}
	return list, true
}

// forgetBaseline drops the kept baseline (P's copy is gone or changing).
func (m *dirMemory) forgetBaseline() {
	if m != nil {
		m.base = nil
	}
}

// recallBaseline returns a copy of the kept baseline if the open file f
// is the one it was kept from, else nil.
func (m *dirMemory) recallBaseline(f *os.File) *baseline {
	if m == nil || m.base == nil {
		return nil
	}
	k := m.base
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	st := workdir.StatOf(fi)
	if (fileIdentity{exists: true, size: st.Size, mtime: st.Mtime, ctime: st.Ctime, ino: st.Ino, dev: st.Dev}) != k.at {
		return nil
	}
	var sum [32]byte
	if n, err := f.ReadAt(sum[:], st.Size-32); n != 32 || (err != nil && err != io.EOF) || !bytes.Equal(sum[:], k.sum) {
		return nil
	}
	// A fresh value per session: sessions set Generation, decode Files
	// (dropping entries) and replace Held; the bytes are never written.
	return &baseline{Baseline: k.b.Copy(), ignored: k.b.ignored, ignoredKnown: k.b.ignoredKnown, kept: k}
}

// ignoredPath reports whether addVirtual takes A's file at p for one L
// leaves out (the test its walk applies to each path).
func (e *Engine) ignoredPath(p string) bool {
	return e.ignore.MayMatchBytes([]byte(p)) && e.ignore.MatchPath(p)
}
