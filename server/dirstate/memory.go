package dirstate

import (
	"bytes"
	"io"
	"os"
	"sync"
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
//     at most every StatsSaveEvery. Each entry is a fact
//     (this stat means this content) that the scan checks against L, so
//     even a copy another process replaced in the same timestamp tick
//     could cost re-reads, never a wrong tree; another process's copy is
//     taken as soon as the identity differs.
//
//   - the baseline last read or written, reused while P's file is proved
//     to be that one (Kept below).
//
// The recovery flag and the pending record are read from P on every call,
// as before (each costs one open that fails when there is none): another
// process may have committed the same directory, and they decide what is
// merged. The store client and the
// open chain caches already live as long as the Engine.

// maxMemories bounds the directories remembered (each holds an inotify
// instance and one watch per directory).
const maxMemories = 16

// Memory is what is kept of one L (by its private state directory). The
// directory lock guards its contents.
type Memory struct {
	Listings *workdir.WatchedListings
	Stats    *workdir.StatCache // nil: none kept (in use by a session, or never saved)
	StatsAt  FileIdentity
	SavedAt  time.Time // when the stat cache was last written to P
	Base     *Kept     // the baseline last read or written (nil: none)
	Ref      *DeltaRef // L as the last call left it, when that was A (nil: none)
}

// DeltaRef is L's tree as the last call left it (Files, with the stat
// cache it left beside it), recorded only when that tree was exactly A,
// the kept baseline. The next call's delta from A then needs only the
// paths its scan touched (workdir.Listing.Touched), provided that call's
// A is the same kept baseline and its scan started from the same stat
// cache, untouched since: every other path of the new tree has its
// stat-cache entry's ID, which is the ID it had in Files, which is A's.
// Anything else (another process's baseline or stat cache, a call that
// failed) computes the delta over every path, as a fresh process does.
type DeltaRef struct {
	Kept    *Kept
	Files   map[string]cas.ID
	Stats   *workdir.StatCache
	Virtual map[string]bool // the virtual paths of Files (A's at the paths L ignores)
}

// SameStats reports whether a and b are one cache (not merely equal ones).
func SameStats(a, b *workdir.StatCache) bool {
	return a != nil && a == b
}

// StatsSaveEvery is how often a long-lived engine writes the stat cache
// to P (it writes it at most this often and keeps it in memory between):
// a 10,000-file cache is about a megabyte to encode and write on every
// commit. P's copy is for the next process, which at worst re-reads the
// files changed since it was written.
const StatsSaveEvery = 2 * time.Second

// FileIdentity is what tells one version of a file in P from another.
type FileIdentity struct {
	exists             bool
	size, mtime, ctime int64
	ino, dev           uint64
	sum                [32]byte // the stat cache's checksum (StatsIdentityOf); zero otherwise
}

func identityOf(p string) FileIdentity {
	fi, err := os.Lstat(p)
	if err != nil {
		return FileIdentity{}
	}
	st := workdir.StatOf(fi)
	return FileIdentity{exists: true, size: st.Size, mtime: st.Mtime, ctime: st.Ctime, ino: st.Ino, dev: st.Dev}
}

// StatsIdentityOf is the stat cache's identity: its file's, and the
// checksum that ends it. The file is overwritten in place when its length
// is unchanged (pstate.Dir.SaveStatCache), which keeps the inode and the
// size, and may keep the times when two writes fall in one tick of the
// file system's clock; the checksum, over the whole content, still tells
// two versions apart.
func StatsIdentityOf(p string) FileIdentity {
	id := identityOf(p)
	if !id.exists || id.size < 32 {
		return id
	}
	f, err := os.Open(p)
	if err != nil {
		return FileIdentity{}
	}
	defer f.Close()
	if _, err := f.ReadAt(id.sum[:], id.size-32); err != nil {
		return FileIdentity{}
	}
	return id
}

// Memories is what a long-lived engine keeps of every L it serves, by
// private state directory; nil (a CLI process) keeps nothing.
type Memories struct {
	mu sync.Mutex // guards m (not the Memories' contents: the directory lock does)
	m  map[string]*Memory
}

// NewMemories is an empty Memories.
func NewMemories() *Memories { return &Memories{m: map[string]*Memory{}} }

// Of returns what is kept of the L whose state is in stateDir (nil when
// ms is nil: the engine is not long-lived).
func (ms *Memories) Of(stateDir string) *Memory {
	if ms == nil {
		return nil
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m := ms.m[stateDir]
	if m == nil {
		if len(ms.m) >= maxMemories {
			for k, old := range ms.m { // any one: a host uses few directories
				old.Listings.Close()
				delete(ms.m, k)
				break
			}
		}
		m = &Memory{Listings: workdir.NewWatchedListings()}
		ms.m[stateDir] = m
	}
	return m
}

// Close releases every watch (Engine.Close).
func (ms *Memories) Close() {
	if ms == nil {
		return
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for k, m := range ms.m {
		m.Listings.Close()
		delete(ms.m, k)
	}
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

// Kept is a decoded baseline (entries undecoded) and its file.
// Its ignored set (Baseline.Ignored) is learned by the first call that
// needs it and then shared by every later copy: it depends only on the
// entries, which never change, and on the engine's rules, which are
// fixed for the engine's life.
type Kept struct {
	b   *Baseline
	sum []byte // the file's last 32 bytes
	at  FileIdentity
}

// Generation is the kept baseline's generation.
func (k *Kept) Generation() uint64 { return k.b.Generation }

// Ignored is the kept baseline's ignored set, and whether it is known.
func (k *Kept) Ignored() ([]plan.PathID, bool) { return k.b.Ignored, k.b.IgnoredKnown }

// keepBaseline remembers data, the content of the open baseline file f,
// with what from (nil: nothing) already knows of it (its ignored set),
// and returns what it kept (nil: nothing).
func (m *Memory) keepBaseline(f *os.File, data []byte, from *Baseline) *Kept {
	if m == nil {
		return nil
	}
	m.Base = nil
	fi, err := f.Stat()
	if err != nil || fi.Size() != int64(len(data)) {
		return nil
	}
	rec, err := pstate.ParseBaseline(data, false)
	if err != nil {
		return nil
	}
	b := &Baseline{Baseline: *rec}
	if from != nil && from.IgnoredKnown {
		b.Ignored, b.IgnoredKnown = from.Ignored, true
	}
	st := workdir.StatOf(fi)
	m.Base = &Kept{b: b, sum: data[len(data)-32:],
		at: FileIdentity{exists: true, size: st.Size, mtime: st.Mtime, ctime: st.Ctime, ino: st.Ino, dev: st.Dev}}
	return m.Base
}

// forgetBaseline drops the kept baseline (P's copy is gone or changing).
func (m *Memory) forgetBaseline() {
	if m != nil {
		m.Base = nil
	}
}

// recallBaseline returns a copy of the kept baseline if the open file f
// is the one it was kept from, else nil.
func (m *Memory) recallBaseline(f *os.File) *Baseline {
	if m == nil || m.Base == nil {
		return nil
	}
	k := m.Base
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	st := workdir.StatOf(fi)
	if (FileIdentity{exists: true, size: st.Size, mtime: st.Mtime, ctime: st.Ctime, ino: st.Ino, dev: st.Dev}) != k.at {
		return nil
	}
	var sum [32]byte
	if n, err := f.ReadAt(sum[:], st.Size-32); n != 32 || (err != nil && err != io.EOF) || !bytes.Equal(sum[:], k.sum) {
		return nil
	}
	// A fresh value per session: sessions set Generation, decode Files
	// (dropping entries) and replace Held; the bytes are never written.
	return &Baseline{Baseline: k.b.Copy(), Ignored: k.b.Ignored, IgnoredKnown: k.b.IgnoredKnown, Kept: k}
}
