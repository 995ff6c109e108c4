package workdir

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
	"github.com/slivingdoc/slivingdoc/merge"
)

// ErrChangedDuringScan: a file was replaced between its directory listing
// and its read (the caller may simply retry).
var ErrChangedDuringScan = errors.New("server: a file changed while it was being read")

// TempPrefix marks the temporary siblings the rewrite of L creates
// (TempPrefix, 16 lowercase hex digits, ".tmp"). Such a name is taken for
// a leftover of ours only while an interrupted rewrite is pending (the
// recovery flag is set: every rewrite sets it before creating one, and a
// rewrite that ends removes its own): then the scan sets it aside and the
// resynchronisation removes it. At any other time it is an ordinary file,
// so a user's file of that name is never hidden or deleted.
const TempPrefix = ".slivingdoc-tmp-"

func IsTempName(name string) bool {
	if !strings.HasPrefix(name, TempPrefix) || !strings.HasSuffix(name, ".tmp") || len(name) != len(TempPrefix)+16+4 {
		return false
	}
	for _, c := range name[len(TempPrefix) : len(TempPrefix)+16] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Rules is what a scan leaves out: ignored entries, and (with
// tempsOurs) the temporary files of an interrupted rewrite.
type Rules struct {
	Ignore    *Ignore
	TempsOurs bool
}

// Listing is what one scan found in L.
type Listing struct {
	Files   map[string]cas.ID // tree L: path → file ID (the caller's own map)
	Stats   *StatCache        // the stat cache to record
	Content map[string][]byte // files read by this scan
	Invalid []Refused         // every file that breaks the content rules
	Temps   []string          // leftover temporary files of a crashed rewrite
	Ignored []string          // entries of L the ignore rules leave out (directories end in '/')
	Changed bool              // stats differ from the loaded cache
	// Chunks are the chunk lists of the files of Content stored in
	// chunks (cas.HashFile): a commit puts those files into its pack
	// without cutting and hashing them again (cas.WriteFileChunks).
	Chunks map[string][]cas.ChunkRef
	// Markers are the paths of Files whose entry in Stats says the file
	// holds a complete conflict block (unordered): found during the walk,
	// so a commit need not look at every entry of Stats.
	Markers []string
	// Touched is every path where Files may differ from the IDs the given
	// cache held when the scan began: the files read (new, changed or
	// untrusted entries) and the entries it dropped. Every other path of
	// Files has its cache entry's ID, since it was reused as it was.
	Touched []string
}

// Refused is a file of L that breaks the content rules, and why (one of
// the File* reasons).
type Refused struct {
	Path, Reason string
}

// Entry is one file's record in the stat cache: the stat fields compared
// on the next scan, the file ID they vouch for, and whether they may be
// trusted (see racyMargin).
type Entry struct {
	Size, Mtime, Ctime int64
	Ino, Dev           uint64
	ID                 cas.ID
	Trusted            bool
	Markers            bool   // the content holds a complete conflict block
	Key                string // the entry's key (not encoded): reused by the scan
}

// racyMargin: a file whose mtime is not older than the scan start by this
// much may still be written within the same timestamp tick after we read
// it, so its cache entry is not trusted next time. File systems with
// whole-second timestamps get two seconds.
func racyMargin(mtime int64) int64 {
	if mtime%int64(time.Second) == 0 {
		return int64(2 * time.Second)
	}
	return int64(50 * time.Millisecond)
}

type pendingRead struct {
	dir  *dirRef
	name string // within dir
	rel  string // within L
	st   Entry
}

// dirRef is a directory of L, opened only when it must be (its listing is
// not remembered, or a file in it must be read).
type dirRef struct {
	parent *dirRef
	name   string
	mu     sync.Mutex
	root   *os.Root
	err    error
	// fd is the directory opened for listing only, relative to its
	// parent's fd (rawDirs, no WatchedListings; -1: none), and fdErr why it could
	// not be; ownFD: the walk of this directory closes it.
	fd    int
	fdErr error
	ownFD bool
}

// Scan lists L through root under rules, reuses trusted stat-cache
// entries for files whose stat did not change and reads (in parallel) the
// others. Directories are listed in parallel too: a no-op call is one stat
// per file, and on a large notebook those system calls are most of its
// cost; with mem (nil: none), the listings of directories a change watch
// proves unchanged are reused instead (see WatchedListings). The cache becomes
// the result's Stats (updated in place, not copied).
func Scan(root *os.Root, cache *StatCache, rules Rules, mem *WatchedListings) (*Listing, error) {
	start := time.Now().UnixNano()
	res := &Listing{
		Stats:   cache, // updated in place: most entries are reused as they are
		Content: map[string][]byte{},
		Chunks:  map[string][]cas.ChunkRef{},
	}
	w := &walker{res: res, cache: cache, rules: rules, sem: make(chan struct{}, runtime.GOMAXPROCS(0))}
	if n := cache.Len(); n > 0 && n < serialBelow {
		w.sem = nil // one goroutine: see serialBelow
	}
	carry := mem.takeCarried() // (always taken: a scan that cannot use it leaves none)
	if mem.begin(root) {
		w.mem = mem
		w.sameCache = mem.sameCache(cache)
		if w.sameCache && carry != nil {
			// Files starts as the last scan's: see carried.
			carry.gen++
			carry.reached.Store(0)
			w.carry = carry
			res.Files = maps.Clone(carry.files)
		}
	}
	if res.Files == nil {
		res.Files = make(map[string]cas.ID, cache.Len())
	}
	top := &dirRef{root: root, fd: -1}
	if rawDirs && w.mem == nil {
		// Listed through raw descriptors: an os.Root per directory costs
		// an open, an fstat, the runtime poller's registration attempt and
		// a dozen allocations more than git pays to list it.
		f, err := root.Open(".")
		if err != nil {
			mem.end(false, nil, nil)
			return nil, err
		}
		defer f.Close()
		top.fd = fdOf(f)
	}
	if !w.skip("") {
		w.walk(top, "", rules.Ignore.rootStates(), false)
	}
	w.wg.Wait()
	defer func() {
		for _, r := range w.opened {
			r.Close()
		}
	}()
	if w.err != nil {
		mem.end(false, nil, nil)
		return nil, w.err
	}
	if err := res.readPending(w, w.pending, start); err != nil {
		mem.end(false, nil, nil)
		return nil, err
	}
	mem.end(true, cache, w.skipped)
	mem.keepCarried(w.carryNext())
	for _, p := range w.pending {
		res.Touched = append(res.Touched, p.rel)
	}
	sort.Slice(res.Invalid, func(i, j int) bool { return res.Invalid[i].Path < res.Invalid[j].Path })
	sort.Strings(res.Ignored)
	res.Changed = len(w.pending) > 0 || cache.unordered // (the latter: to be saved in order once)
	// Every path of Files is a key of cache (a reused entry, a remembered
	// outcome's, or one readPending just stored), so the cache holds a
	// path the scan did not find exactly when it is the larger: the walk
	// over every entry is needed only then, not on every changed file.
	if cache.Len() != len(res.Files) {
		var vanished []string
		for p := range cache.All() {
			if _, ok := res.Files[p]; !ok {
				vanished = append(vanished, p) // (or now invalid)
			}
		}
		for _, p := range vanished {
			cache.Delete(p) // forget it
			res.Changed = true
			res.Touched = append(res.Touched, p)
		}
	}
	return res, nil
}

// serialBelow is the size of stat cache below which a scan lists its
// directories on one goroutine. Listing in parallel shortens a large scan
// (its system calls overlap), but on a small tree what it buys is a
// fraction of a millisecond and what it costs is CPU: threads the runtime
// starts for goroutines blocked in system calls, and their wake-ups. A
// no-op call on 1,000 files spent 3-4% more CPU listing in parallel than
// on one goroutine. A tree never scanned (an empty cache) may be of any
// size, so it is listed in parallel.
const serialBelow = 4000

// walker lists directories, each on its own goroutine while a slot is
// free, and merges every directory's findings under one lock.
type walker struct {
	res   *Listing
	cache *StatCache
	rules Rules
	mem   *WatchedListings // nil: remember nothing
	// sameCache: the stat cache is the map the last scan with mem used,
	// so a directory's remembered outcome still holds (server/dirstate/memory.go).
	sameCache bool
	sem       chan struct{}
	wg        sync.WaitGroup
	// carry: the last scan's files, which Files started from (nil: none).
	carry *carried

	mu      sync.Mutex
	redone  []redone // the directories whose files were put in Files anew
	skipped []string // the subtrees skipped whole (their files carried)
	pending []pendingRead
	opened  []*os.Root
	err     error
}

func (w *walker) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// open returns d's root, opening it (and its parents) the first time.
func (w *walker) open(d *dirRef) (*os.Root, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.root != nil || d.err != nil {
		return d.root, d.err
	}
	pr, err := w.open(d.parent)
	if err == nil {
		d.root, err = pr.OpenRoot(d.name)
	}
	if err != nil {
		d.err = err
		return nil, err
	}
	w.mu.Lock()
	w.opened = append(w.opened, d.root)
	w.mu.Unlock()
	return d.root, nil
}

// dirsListed counts the directories listed from the file system (for
// tests: a remembered listing is not counted).
var dirsListed atomic.Int64

// dirEntBufs recycles directory listings: a walk is done with its
// listing before it descends, and a fresh slice per directory is 2 MB of
// new memory for a short process at 10,000 files.
var dirEntBufs = sync.Pool{New: func() any { return new([]dirEnt) }}

// list returns the entries of directory prefix: remembered (recalled)
// when the WatchedListings vouches for them, else freshly listed (and remembered
// when watched). A shared listing belongs to the WatchedListings: not to be
// modified. parentReused says the parent's listing was recalled, so the
// name still denotes the directory remembered under it. A recalled
// listing comes with the outcome of its last walk when that still holds
// (nil otherwise).
func (w *walker) list(d *dirRef, prefix string, parentReused bool) (entries []dirEnt, o *outcome, shared, recalled, pooled bool, err error) {
	if w.mem != nil && (parentReused || prefix == "") {
		if ents, o, touched, ok := w.mem.recall(prefix, -1, w.rules, w.sameCache); ok && w.restat(d, prefix, ents, touched) {
			return ents, o, true, true, false, nil
		}
	}
	if d.fd >= 0 || d.fdErr != nil {
		if d.fdErr != nil {
			return nil, nil, false, false, false, d.fdErr
		}
		dirsListed.Add(1)
		listing := dirEntBufs.Get().(*[]dirEnt)
		entries, err = listFD(d.fd, (*listing)[:0])
		if err != nil {
			dirEntBufs.Put(listing)
			return nil, nil, false, false, false, err
		}
		*listing = entries
		return entries, nil, false, false, true, nil
	}
	r, err := w.open(d)
	if err != nil {
		return nil, nil, false, false, false, err
	}
	f, err := r.Open(".")
	if err != nil {
		return nil, nil, false, false, false, err
	}
	defer f.Close()
	wd, watched := int32(0), false
	if w.mem != nil {
		if wd, watched = w.mem.watchDir(f); watched && prefix != "" && !parentReused {
			if ents, o, touched, ok := w.mem.recall(prefix, wd, w.rules, w.sameCache); ok && w.restat(d, prefix, ents, touched) {
				return ents, o, true, true, false, nil // the same directory, the same entries
			}
		}
	}
	dirsListed.Add(1)
	if watched {
		entries, err = listDir(f, nil)
		if err == nil && !slices.ContainsFunc(entries, func(e dirEnt) bool { return e.shared }) {
			w.mem.remember(prefix, wd, entries)
		}
		return entries, nil, true, false, false, err
	}
	listing := dirEntBufs.Get().(*[]dirEnt)
	entries, err = listDir(f, (*listing)[:0])
	if err != nil {
		dirEntBufs.Put(listing)
		return nil, nil, false, false, false, err
	}
	*listing = entries
	return entries, nil, false, false, true, nil
}

// restat takes again the stats of the files of d's recalled listing
// that content-only events named (touched, usually none), so that the
// listing stands for a fresh one; false: it cannot, and the directory
// is to be listed afresh. d is opened for it, as it would be to read
// those files, whose stats have most likely changed.
func (w *walker) restat(d *dirRef, prefix string, ents []dirEnt, touched []string) bool {
	if len(touched) == 0 {
		return true
	}
	filesRestated.Add(int64(len(touched)))
	r, err := w.open(d)
	ok := err == nil && restat(r, ents, touched)
	w.mem.restated(prefix, ok)
	return ok
}

// filesRestated counts the files re-stat-ed in recalled listings (for
// tests).
var filesRestated atomic.Int64

// dirsWalked counts the directories walked (for tests: those inside a
// skipped subtree are not).
var dirsWalked atomic.Int64

func (w *walker) walk(d *dirRef, prefix string, states dirStates, parentReused bool) {
	dirsWalked.Add(1)
	if d.ownFD {
		defer closeFD(d.fd) // once the subdirectories are opened (descend)
	}
	entries, o, shared, reusedHere, pooled, err := w.list(d, prefix, parentReused)
	if err != nil {
		w.fail(err)
		return
	}
	if o != nil { // recalled, and its outcome holds (the same cache and rules)
		inFiles := w.isCarried(prefix, o)
		w.mu.Lock()
		if !inFiles {
			w.redoLocked(prefix, o, o.files, nil)
			for _, f := range o.files {
				w.res.Files[f.rel] = f.id
			}
		}
		w.res.Ignored = append(w.res.Ignored, o.ignored...)
		w.res.Markers = append(w.res.Markers, o.markers...)
		w.mu.Unlock()
		w.descend(d, o.subs, true)
		return
	}
	var ignored []string
	var below map[string]dirStates // anchored-rule states of subdirectories
	if ign := w.rules.Ignore; !ign.Empty() {
		// Ignored entries are dropped before anything looks at them: they
		// are never read, and never collide with a sibling.
		kept := entries[:0]
		if shared {
			kept = make([]dirEnt, 0, len(entries)) // a remembered listing stays whole
		}
		for _, ent := range entries {
			drop, sub := ign.matchEntry(states, ent.name, ent.typ.IsDir())
			if sub != nil {
				if below == nil {
					below = map[string]dirStates{}
				}
				below[ent.name] = sub
			}
			if drop {
				rel := prefix + ent.name
				if ent.typ.IsDir() {
					rel += "/"
				}
				ignored = append(ignored, rel)
				continue
			}
			kept = append(kept, ent)
		}
		entries = kept
	}
	names := make([]string, len(entries))
	for i, ent := range entries {
		names[i] = ent.name
	}
	collide := collisions(names)
	var relBuf []byte
	run := w.cache.dirRun(prefix) // this directory's entries in the cache
	var (
		reused  = make([]found, 0, len(entries))
		markers []string // of reused
		pending []pendingRead
		invalid []Refused
		temps   []string
		subs    []subdir
	)
	for _, ent := range entries {
		name := ent.name
		typ := ent.typ
		if typ.IsRegular() {
			// The common case, a known file: look it up without building
			// its path string (the cache's key is reused).
			relBuf = append(append(relBuf[:0], prefix...), name...)
			if c, ok := w.cache.lookup(run, relBuf, name); ok && c.Trusted {
				if SameStat(c, ent.st) && !collide[name] {
					key := c.Key
					if key == "" {
						key = string(relBuf)
					}
					reused = append(reused, found{key, c.ID})
					if c.Markers {
						markers = append(markers, key)
					}
					continue
				}
			}
		}
		rel := prefix + name
		if w.rules.TempsOurs && typ.IsRegular() && IsTempName(name) {
			temps = append(temps, rel)
			continue
		}
		if reason := nameReason(name); reason != "" {
			invalid = append(invalid, Refused{Path: rel, Reason: reason})
			continue
		}
		if collide[name] {
			invalid = append(invalid, Refused{Path: rel, Reason: FileNameCollision})
			continue
		}
		if len(rel) > MaxPathBytes {
			invalid = append(invalid, Refused{Path: rel, Reason: FilePathTooLong})
			continue
		}
		switch {
		case typ&fs.ModeSymlink != 0:
			invalid = append(invalid, Refused{Path: rel, Reason: FileSymlink})
		case typ.IsDir():
			subs = append(subs, subdir{name: name, rel: rel + "/", states: below[name]})
		case typ.IsRegular():
			pending = append(pending, pendingRead{dir: d, name: name, rel: rel, st: ent.st})
		default:
			invalid = append(invalid, Refused{Path: rel, Reason: FileSpecial})
		}
	}
	if pooled {
		dirEntBufs.Put(&entries) // done with it before descending
	}
	var kept *outcome
	if shared && w.mem != nil && len(pending) == 0 && len(invalid) == 0 && len(temps) == 0 {
		kept = &outcome{files: reused, markers: markers, ignored: ignored, subs: subs}
	}
	w.mu.Lock()
	w.redoLocked(prefix, kept, reused, pending)
	for _, f := range reused {
		w.res.Files[f.rel] = f.id
	}
	w.res.Markers = append(w.res.Markers, markers...)
	w.pending = append(w.pending, pending...)
	w.res.Invalid = append(w.res.Invalid, invalid...)
	w.res.Temps = append(w.res.Temps, temps...)
	w.res.Ignored = append(w.res.Ignored, ignored...)
	w.mu.Unlock()
	if kept != nil {
		w.mem.keepOutcome(prefix, w.rules, kept)
	}
	w.descend(d, subs, reusedHere)
}

// subdir is a directory found in a listing, to walk next.
type subdir struct {
	name, rel string
	states    dirStates
}

// found is a file whose stat-cache entry the scan reused.
type found struct {
	rel string
	id  cas.ID
}

// descend walks the subdirectories of d, in parallel while slots are
// free; parentReused: d's listing was recalled.
func (w *walker) descend(d *dirRef, subs []subdir, parentReused bool) {
	// One allocation for the directories of one listing: a scan of a
	// remembered tree is mostly this loop, once per directory of L.
	refs := make([]dirRef, len(subs))
	for i, sd := range subs {
		sub := &refs[i]
		if parentReused && w.skip(sd.rel) {
			continue // the same directory, nothing in it changed
		}
		sub.parent, sub.name, sub.fd = d, sd.name, -1
		if d.fd >= 0 {
			// Opened before this walk returns and closes d's descriptor;
			// a goroutine walking sub owns sub's.
			sub.fd, sub.fdErr = openSubdir(d.fd, sd.name)
			sub.ownFD = sub.fdErr == nil
			if sub.fdErr != nil {
				sub.fdErr = &fs.PathError{Op: "openat", Path: sd.rel, Err: sub.fdErr}
			}
		}
		if parentReused {
			// Most likely remembered too: no system call to overlap, so
			// a goroutine per directory would only add its own cost.
			w.walk(sub, sd.rel, sd.states, true)
			continue
		}
		if w.sem == nil {
			w.walk(sub, sd.rel, sd.states, false)
			continue
		}
		select {
		case w.sem <- struct{}{}:
			w.wg.Add(1)
			go func() {
				defer func() { <-w.sem; w.wg.Done() }()
				w.walk(sub, sd.rel, sd.states, parentReused)
			}()
		default:
			w.walk(sub, sd.rel, sd.states, parentReused)
		}
	}
}

// readPending reads the files the cache could not vouch for, on all cores:
// hashing dominates a cold scan.
func (res *Listing) readPending(w *walker, pending []pendingRead, start int64) error {
	if len(pending) == 0 {
		return nil
	}
	type outcome struct {
		content []byte
		chunks  []cas.ChunkRef
		st      Entry
		reason  string
		err     error
	}
	out := make([]outcome, len(pending))
	_ = parallel.For(len(pending), runtime.GOMAXPROCS(0), func(i int) error {
		p := pending[i]
		o := &out[i]
		r, err := w.open(p.dir)
		if err != nil {
			o.err = err
			return nil
		}
		o.content, o.st, o.reason, o.err = ReadChecked(r, p.name, p.st)
		if o.err == nil && o.reason == "" {
			o.st.ID, o.chunks, o.err = cas.HashFile(o.content)
			o.st.Markers = len(merge.ScanMarkers(o.content)) > 0
			o.st.Trusted = o.st.Mtime < start-racyMargin(o.st.Mtime)
		}
		return nil // every file is read; the first failure by index is reported below
	})
	for i, p := range pending {
		o := out[i]
		switch {
		case o.err != nil:
			return o.err
		case o.reason != "":
			res.Invalid = append(res.Invalid, Refused{Path: p.rel, Reason: o.reason})
		default:
			o.st.Key = p.rel
			res.Files[p.rel] = o.st.ID
			res.Stats.Set(p.rel, o.st)
			res.Content[p.rel] = o.content
			if o.chunks != nil {
				res.Chunks[p.rel] = o.chunks
			}
			if o.st.Markers {
				res.Markers = append(res.Markers, p.rel)
			}
		}
	}
	return nil
}

// ReadChecked reads one file and checks it is still the regular file that
// was listed (a FIFO or symlink raced in is refused, not followed or
// blocked on) and that its content is UTF-8 without NUL.
func ReadChecked(r *os.Root, name string, listed Entry) ([]byte, Entry, string, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if li, lerr := r.Lstat(name); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			return nil, Entry{}, FileSymlink, nil
		}
		return nil, Entry{}, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, Entry{}, "", err
	}
	if !fi.Mode().IsRegular() {
		return nil, Entry{}, FileSpecial, nil
	}
	st := StatOf(fi)
	if st.Ino != listed.Ino || st.Dev != listed.Dev {
		// Replaced since the listing: by a symlink (refuse) or a new file.
		if li, lerr := r.Lstat(name); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			return nil, Entry{}, FileSymlink, nil
		}
		return nil, Entry{}, "", ErrChangedDuringScan
	}
	content := make([]byte, 0, fi.Size()+1)
	buf := bytes.NewBuffer(content)
	if _, err := io.Copy(buf, f); err != nil {
		return nil, Entry{}, "", err
	}
	content = buf.Bytes()
	if reason := contentReason(content); reason != "" {
		return nil, Entry{}, reason, nil
	}
	// Stat again after reading: a write during the read changes the stat,
	// and the next scan must not trust what we recorded.
	if fi2, err := f.Stat(); err == nil {
		if st2 := StatOf(fi2); !SameStat(st, st2) {
			st.Mtime = -1 // never equal to a real stat: re-read next time
		}
	}
	return content, st, "", nil
}

func contentReason(content []byte) string {
	if bytes.IndexByte(content, 0) >= 0 {
		return FileNulByte
	}
	if !utf8.Valid(content) {
		return FileInvalidUTF8
	}
	return ""
}

func StatOf(fi fs.FileInfo) Entry {
	ctime, ino, dev := sysStat(fi)
	return Entry{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Ctime: ctime, Ino: ino, Dev: dev}
}

func SameStat(a, b Entry) bool {
	return a.Size == b.Size && a.Mtime == b.Mtime && a.Ctime == b.Ctime && a.Ino == b.Ino && a.Dev == b.Dev
}
