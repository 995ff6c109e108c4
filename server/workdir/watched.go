package workdir

import (
	"os"
	"slices"
	"strings"
	"sync"
)

// WatchedListings is what a long-lived process (serve) remembers of one L between
// scans: the raw listing (names, types, stats) of each directory, reused
// only while a change watch proves that nothing in that directory changed
// since it was listed. A scan with a WatchedListings lists and stats only the
// directories whose entries changed, and stats again only the files whose
// content changed in the others; the others cost no system call unless a file
// in them must be read, and a subtree in which nothing changed since the
// last scan, and whose files that scan carried, is not visited at all
// (dirMemo.settled), even below a directory in which a file was written.
//
// Soundness (what makes a remembered listing as good as a fresh one):
//   - The watch on a directory is placed before the directory is listed,
//     so every change after the listing began (a file written, truncated,
//     chmod-ed, touched, created, removed or renamed in it, the directory
//     itself moved or removed) queues an event; the kernel queues it before
//     the changing system call returns, so a change made before a call
//     starts is seen by that call. Each scan first drains the queue and
//     forgets the listing of every directory an event names, except for
//     an event that says only that the content or attributes of a
//     (non-directory) file in it changed (IN_MODIFY, IN_CLOSE_WRITE,
//     IN_ATTRIB with a name): a listing is names, types and the stats of
//     regular files, and such an event changes no name or type, so the
//     listing stands once that file is stat-ed again (after the drain, so
//     the stat is at least as new as the event; a later change queues
//     another). That re-stat must find the name listed as a regular file
//     and still one, with no other hard link, or the directory is listed
//     afresh; so even an event taken for content-only by mistake could
//     not keep a stale name or type. Entry events (created, removed,
//     moved in or out), a subdirectory's or the directory's own
//     attributes, its removal or move, and the end of its watch forget
//     the listing. A queue overflow, or any failure to read it, forgets
//     everything.
//   - A remembered listing of a subdirectory is used without opening it
//     only when its parent's listing was itself reused (no entry of the
//     parent was created, removed or renamed since, so the name still
//     denotes the same directory). Below a relisted parent each
//     subdirectory is opened and its watch identity compared with the
//     remembered one.
//   - L's top directory must be the directory last scanned (same device
//     and inode), on a local file system whose changes all pass through
//     this kernel (ext4, xfs, btrfs, tmpfs, f2fs, zfs, overlayfs); a
//     directory on another device than L's is never remembered (a mount
//     inside L). Otherwise the scan lists everything, as without a WatchedListings.
//   - A directory holding a file with other hard links when it is listed
//     is never remembered: a change made through another link raises no
//     event on this directory's watch.
//   - The stat cache rules still apply to every entry: a remembered stat
//     only stands in for a fresh one, so an untrusted entry (racy mtime) is
//     still re-read, and an edit within the same timestamp tick is noticed
//     through its event.
//
// Not seen by the watch (as with every inotify-based tool, git's
// fsmonitor included): writes through a shared memory mapping (no event
// until the file is otherwise changed), a hard link to a file of L made
// from outside L after its directory was listed and then written through,
// and mounts made over a directory of L after it was listed. Such a change
// is seen once anything else changes in that directory, or by the next
// process (the CLI keeps no memory).
//
// Only Linux has the watch (inotify); elsewhere a WatchedListings remembers nothing
// and every scan lists everything. A WatchedListings is safe for one scan at a time
// (the engine serialises calls on one L); Close releases the watch.
type WatchedListings struct {
	mu      sync.Mutex
	w       *watch // nil: not watching (none yet, unsupported, or failed)
	off     bool   // the watch cannot be had here: never try again
	rootDev uint64
	rootIno uint64
	dirs    map[string]*dirMemo // by directory prefix ("" for L, "a/b/")
	byWD    map[int32][]string  // prefixes remembered under each watch (may be stale)
	gen     uint64              // scans done: memos not seen in the last one are dropped
	// reached counts the memos this scan reached, each once (those inside
	// a skipped subtree by its count): when it is all of them, end has
	// none to drop. visited are the prefixes recalled or listed by this
	// scan (not those inside a skipped subtree), whose settled state end
	// finds anew.
	reached int
	visited []string
	// cache is the stat cache of the last scan (held, so that no other cache
	// can take its address): a directory's outcome holds only against it.
	cache *StatCache
	// carried is the last scan's files for the next (nil: none): taken by
	// every scan, and left again only by one that succeeded with the watch.
	carried *carried
}

// dirMemo is the remembered listing of one directory.
type dirMemo struct {
	wd      int32 // its watch
	entries []dirEnt
	valid   bool // no event that may change the entries since the listing began
	// touched are the files whose content or attributes an event said
	// changed since the listing began (watch.drain): their stats in
	// entries are stale until re-stat-ed (restat), which the next walk of
	// the directory does before it uses the listing.
	touched []string
	seen    uint64
	// outcome of the last walk of this listing, when every file in it was
	// vouched for by the stat cache (nil: none); under rules.
	outcome *outcome
	rules   Rules
	used    uint64 // the scan (gen) that last used or kept outcome
	// settled: at the end of the last scan, this directory and every
	// directory below it were recalled unchanged with their outcome used
	// (under rules, against the cache held), so their files are all in the
	// carried files, and no event has named any of them since (forget
	// unsettles a directory and all its ancestors). A scan may then skip
	// the whole subtree, taking below's ignored entries and marker files.
	settled bool
	below   *subtree
}

// subtree is what a settled directory and the directories below it add
// to a scan besides their files (which are carried).
type subtree struct {
	ignored []string
	markers []string
	dirs    int // memos in the subtree, itself included
}

// outcome is what a walk of one directory found: every file reused from
// the stat cache, the ignored entries and the subdirectories. It is a
// function of the listing, the rules and the stat cache's entries, so it
// holds while the listing is recalled, the rules are the same and the
// cache is the same one: the engine changes entries of that cache only for
// files it writes or removes in L, whose directories the watch then
// reports, and a scan changes only entries of directories it read files
// in, which keep no outcome.
type outcome struct {
	files   []found
	markers []string // of files: those whose entry says they hold conflict blocks
	ignored []string
	subs    []subdir
}

// NewWatchedListings returns an empty WatchedListings.
func NewWatchedListings() *WatchedListings {
	return &WatchedListings{dirs: map[string]*dirMemo{}, byWD: map[int32][]string{}}
}

// Close stops watching and forgets everything.
func (m *WatchedListings) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reset()
	return nil
}

// reset forgets every listing and closes the watch (m.mu held).
func (m *WatchedListings) reset() {
	if m.w != nil {
		m.w.close()
		m.w = nil
	}
	clear(m.dirs)
	clear(m.byWD)
	m.carried = nil
}

// takeCarried returns the last scan's files and forgets them (nil: none).
func (m *WatchedListings) takeCarried() *carried {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.carried
	m.carried = nil
	return c
}

// keepCarried leaves c for the next scan.
func (m *WatchedListings) keepCarried(c *carried) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.carried = c
}

// begin prepares a scan of L through root: it checks that root is the
// directory remembered and drains the watch's events. It reports whether
// listings may be remembered during this scan.
func (m *WatchedListings) begin(root *os.Root) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.reached = 0
	m.visited = m.visited[:0]
	if m.off {
		return false
	}
	fi, err := root.Stat(".")
	if err != nil {
		m.reset()
		return false
	}
	st := StatOf(fi)
	if m.w != nil && (st.Dev != m.rootDev || st.Ino != m.rootIno) {
		m.reset() // L was replaced: the watches are on another directory
	}
	if m.w == nil {
		w, ok, err := newWatch(root)
		if !ok {
			m.off = true // this platform or file system: no watch, ever
			return false
		}
		if err != nil {
			return false // try again next time (for example the instance limit)
		}
		m.w, m.rootDev, m.rootIno = w, st.Dev, st.Ino
		clear(m.dirs)
		clear(m.byWD)
		return true
	}
	if !m.w.drain(m.event) {
		m.reset()
		return false
	}
	return true
}

// event takes in one event of the watch (watch.drain). One that may
// have changed the entries of the directory watched as wd (name "")
// forgets its listings; one that says only that the content or the
// attributes of file name in it changed leaves the listings standing,
// drops their outcome and notes the name, which the next walk of the
// directory re-stats before it uses the listing (walker.list). Either
// unsettles the directory and its ancestors.
func (m *WatchedListings) event(wd int32, name string) {
	if wd < 0 || name == "" {
		m.forget(wd)
		return
	}
	for _, p := range m.byWD[wd] {
		d := m.dirs[p]
		if d == nil || d.wd != wd || !d.valid {
			continue
		}
		d.outcome = nil
		m.unsettle(p)
		switch {
		case slices.Contains(d.touched, name):
		case len(d.touched) >= maxTouched:
			d.valid = false // as cheap to list it again
		default:
			d.touched = append(d.touched, name)
		}
	}
}

// maxTouched bounds the files of one directory noted for a re-stat: past
// it, the directory is listed again.
const maxTouched = 64

// forget invalidates the listings of the directories watched as wd (all
// of them for wd < 0: the queue overflowed).
func (m *WatchedListings) forget(wd int32) {
	if wd < 0 {
		for _, d := range m.dirs {
			d.valid, d.settled = false, false
		}
		return
	}
	for _, p := range m.byWD[wd] {
		if d := m.dirs[p]; d != nil && d.wd == wd {
			d.valid = false
			m.unsettle(p)
		}
	}
}

// unsettle marks prefix and each of its ancestors as not settled: a
// change at prefix is inside each of their subtrees.
func (m *WatchedListings) unsettle(prefix string) {
	for p := prefix; ; {
		if d := m.dirs[p]; d != nil {
			if !d.settled && p != prefix {
				return // its ancestors were unsettled with it
			}
			d.settled = false
		}
		if p == "" {
			return
		}
		p = parentPrefix(p)
	}
}

// parentPrefix is the prefix of the directory holding directory prefix
// ("a/b/" → "a/", "a/" → "").
func parentPrefix(p string) string {
	i := strings.LastIndexByte(p[:len(p)-1], '/')
	return p[:i+1]
}

// underAny reports whether prefix or one of its ancestors is in set.
func underAny(prefix string, set map[string]bool) bool {
	for p := prefix; ; p = parentPrefix(p) {
		if set[p] {
			return true
		}
		if p == "" {
			return false
		}
	}
}

// skip reports whether the scan may skip the subtree at prefix whole
// (settled, still valid, under the same rules: see dirMemo.settled) and
// then returns what it adds besides its files. The caller holds the
// stat cache of the last scan and its carried files.
func (m *WatchedListings) skip(prefix string, rules Rules) (*subtree, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.dirs[prefix]
	if d == nil || !d.valid || !d.settled || d.rules != rules || d.seen == m.gen {
		return nil, false
	}
	d.seen = m.gen
	m.reached += d.below.dirs
	return d.below, true
}

// end drops the memos of directories the scan did not reach (removed, or
// now ignored; those inside a skipped subtree were reached) and finds
// which of the directories visited are settled. After a failed scan
// everything is forgotten.
func (m *WatchedListings) end(ok bool, cache *StatCache, skipped []string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ok {
		clear(m.dirs)
		clear(m.byWD)
		m.cache = nil
		m.carried = nil
		return
	}
	m.cache = cache
	if m.reached != len(m.dirs) {
		in := make(map[string]bool, len(skipped))
		for _, p := range skipped {
			in[p] = true
		}
		for p, d := range m.dirs {
			if d.seen != m.gen && !underAny(p, in) {
				delete(m.dirs, p)
			}
		}
	}
	m.settle()
	if len(m.byWD) > 2*len(m.dirs)+16 { // rebuild the index without stale prefixes
		clear(m.byWD)
		for p, d := range m.dirs {
			m.byWD[d.wd] = append(m.byWD[d.wd], p)
		}
	}
}

// settle finds anew, deepest first, whether each directory this scan
// visited is settled: its outcome was used by this scan and every
// subdirectory of that outcome is settled (visited and found so, or
// skipped whole). A directory without a memo (not watched) is not, so
// neither is any directory above it.
func (m *WatchedListings) settle() {
	slices.SortFunc(m.visited, func(a, b string) int { return len(b) - len(a) })
	for _, p := range m.visited {
		d := m.dirs[p]
		if d == nil {
			continue
		}
		d.settled, d.below = false, nil
		o := d.outcome
		if !d.valid || d.used != m.gen || o == nil {
			continue
		}
		below := &subtree{ignored: o.ignored, markers: o.markers, dirs: 1}
		ok, more := true, false
		for _, s := range o.subs {
			c := m.dirs[s.rel]
			if c == nil || !c.settled || c.seen != m.gen {
				ok = false
				break
			}
			below.dirs += c.below.dirs
			more = more || len(c.below.ignored) > 0 || len(c.below.markers) > 0
		}
		if !ok {
			continue
		}
		if more { // (else below shares the outcome's lists, never modified)
			below.ignored = slices.Clone(o.ignored)
			below.markers = slices.Clone(o.markers)
			for _, s := range o.subs {
				c := m.dirs[s.rel].below
				below.ignored = append(below.ignored, c.ignored...)
				below.markers = append(below.markers, c.markers...)
			}
		}
		d.settled, d.below = true, below
	}
}

// recall returns the remembered listing of prefix if it is still valid
// and (with wd >= 0) was taken from the directory watched as wd, with the
// outcome of its last walk under rules (nil: none) and the files whose
// stats in it are to be taken again first (dirMemo.touched; never with an
// outcome). The outcome is
// returned only with cacheHeld, when the scan's stat cache is the one
// the outcome was found against (sameCache). One look-up serves both: a
// scan that meets a thousand remembered directories pays one lock and one
// map access for each, not two.
func (m *WatchedListings) recall(prefix string, wd int32, rules Rules, cacheHeld bool) ([]dirEnt, *outcome, []string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.dirs[prefix]
	if d == nil || !d.valid || (wd >= 0 && d.wd != wd) {
		return nil, nil, nil, false
	}
	if d.seen != m.gen {
		d.seen = m.gen
		m.reached++
		m.visited = append(m.visited, prefix)
	}
	var o *outcome
	if cacheHeld && d.rules == rules {
		o = d.outcome
		if o != nil {
			d.used = m.gen
		}
	}
	return d.entries, o, d.touched, true
}

// restated records the re-stat of the files recall named for prefix:
// its listing now stands as it is (ok), or it is forgotten (the caller
// lists the directory again).
func (m *WatchedListings) restated(prefix string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := m.dirs[prefix]; d != nil {
		if ok {
			d.touched = nil
		} else {
			d.valid = false
		}
	}
}

// watchDir places the watch on the open directory f (before it is
// listed) and returns its identity; false: it cannot be remembered.
func (m *WatchedListings) watchDir(f *os.File) (int32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == nil {
		return 0, false
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, false
	}
	if st := StatOf(fi); st.Dev != m.rootDev {
		return 0, false // another file system mounted inside L
	}
	return m.w.add(f)
}

// remember records the listing of prefix taken after its watch wd was
// placed. Events that arrive meanwhile invalidate it at the next scan.
func (m *WatchedListings) remember(prefix string, wd int32, entries []dirEnt) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == nil {
		return
	}
	old := m.dirs[prefix]
	if old == nil || old.wd != wd {
		m.byWD[wd] = append(m.byWD[wd], prefix)
	}
	if old == nil || old.seen != m.gen {
		m.reached++
		m.visited = append(m.visited, prefix)
	}
	m.dirs[prefix] = &dirMemo{wd: wd, entries: entries, valid: true, seen: m.gen}
}

// sameCache reports whether cache is the one the last scan used.
func (m *WatchedListings) sameCache(cache *StatCache) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cache != nil && m.cache == cache
}

// keepOutcome remembers the outcome of a walk of prefix's listing.
func (m *WatchedListings) keepOutcome(prefix string, rules Rules, o *outcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := m.dirs[prefix]; d != nil {
		d.outcome, d.rules, d.used = o, rules, m.gen
	}
}
