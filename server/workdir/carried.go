package workdir

import (
	"maps"
	"sync/atomic"

	"github.com/slivingdoc/slivingdoc/cas"
)

// carried is what a scan with a WatchedListings hands to the next one so
// that the next need not rebuild Listing.Files from every directory: its
// own copy of the Files it returned, and for each directory the paths it
// put there and the outcome they came from.
//
// The next scan (same watch, same stat cache) starts from a copy of
// files. A directory whose recalled outcome is the very one recorded
// here (the same pointer) is already in that copy and is skipped; any
// other directory reached has its recorded paths deleted and its files
// put in anew; a recorded directory the scan did not reach (removed, or
// now ignored) has its paths deleted. Paths belong to exactly one
// directory, so these steps never touch each other's entries, and the
// result is the map a scan from nothing builds (memScan's oracle checks
// it in every test of the memory). The copy the scan returns is the
// caller's: carried keeps its own, never handed out.
type carried struct {
	files map[string]cas.ID
	dirs  map[string]*dirFiles // by directory prefix
	gen   uint64               // scans that used it: a dir not seen in the last one was not reached
	// reached counts the recorded directories this scan reached (each
	// once): when it is all of them, no directory's paths are to go.
	reached atomic.Int64
}

// dirFiles are the paths one directory put in Files: files (whose IDs
// were reused or recalled) and reads (the files read, present unless
// refused).
type dirFiles struct {
	from  *outcome // the outcome files is (nil: a walk that kept none)
	files []found
	reads []string
	seen  uint64
}

func (d *dirFiles) each(f func(string)) {
	for _, x := range d.files {
		f(x.rel)
	}
	for _, p := range d.reads {
		f(p)
	}
}

// redone is a directory whose files this scan put in Files anew.
type redone struct {
	prefix string
	dirFiles
}

// isCarried reports whether Files already holds prefix's files as o found
// them (the scan started from the carried files, which took them from o).
// Safe from the walk's goroutines: the map is only read, and each
// directory's record is written by the one walk of that directory.
func (w *walker) isCarried(prefix string, o *outcome) bool {
	if w.carry == nil {
		return false
	}
	d := w.carry.dirs[prefix]
	if d == nil || d.from != o {
		return false
	}
	d.seen = w.carry.gen
	w.carry.reached.Add(1)
	return true
}

// skip skips the subtree at prefix whole when the watch says nothing in
// it changed since the last scan, which left all its files in the
// carried files (WatchedListings.skip): its ignored entries and marker
// files are added, and its directories count as reached. prefix must
// still denote the directory remembered under it (its parent's listing
// was recalled, or it is L).
func (w *walker) skip(prefix string) bool {
	if w.carry == nil {
		return false
	}
	below, ok := w.mem.skip(prefix, w.rules)
	if !ok {
		return false
	}
	subtreesSkipped.Add(1)
	w.carry.reached.Add(int64(below.dirs))
	w.mu.Lock()
	w.skipped = append(w.skipped, prefix)
	w.res.Ignored = append(w.res.Ignored, below.ignored...)
	w.res.Markers = append(w.res.Markers, below.markers...)
	w.mu.Unlock()
	return true
}

// subtreesSkipped counts the subtrees skipped whole (for tests).
var subtreesSkipped atomic.Int64

// redoLocked drops the carried paths of prefix from Files before the walk
// puts its files there, and records them for the next scan (w.mu held).
func (w *walker) redoLocked(prefix string, from *outcome, files []found, pending []pendingRead) {
	if w.mem == nil {
		return
	}
	if w.carry != nil {
		if d := w.carry.dirs[prefix]; d != nil {
			d.each(func(p string) { delete(w.res.Files, p) })
			w.carry.reached.Add(1)
		}
	}
	r := redone{prefix: prefix, dirFiles: dirFiles{from: from, files: files}}
	if len(pending) > 0 {
		r.reads = make([]string, len(pending))
		for i, p := range pending {
			r.reads[i] = p.rel
		}
	}
	w.redone = append(w.redone, r)
}

// carryNext finishes Files (the paths of carried directories the walk
// did not reach are deleted) and returns what the next scan starts from;
// nil without a memory.
func (w *walker) carryNext() *carried {
	if w.mem == nil {
		return nil
	}
	files := w.res.Files
	c := w.carry
	if c == nil {
		c = &carried{files: maps.Clone(files), dirs: make(map[string]*dirFiles, len(w.redone))}
		for i := range w.redone {
			r := &w.redone[i]
			r.seen = c.gen
			c.dirs[r.prefix] = &r.dirFiles
		}
		return c
	}
	for i := range w.redone {
		r := &w.redone[i]
		if d := c.dirs[r.prefix]; d != nil {
			d.each(func(p string) { delete(c.files, p) })
		}
		r.seen = c.gen
		r.each(func(p string) {
			if id, ok := files[p]; ok {
				c.files[p] = id
			}
		})
		c.dirs[r.prefix] = &r.dirFiles
	}
	if int(c.reached.Load()) == len(c.dirs) {
		return c // every directory recorded was reached: none to forget
	}
	in := make(map[string]bool, len(w.skipped))
	for _, p := range w.skipped {
		in[p] = true
	}
	for prefix, d := range c.dirs {
		if d.seen != c.gen && !underAny(prefix, in) {
			d.each(func(p string) {
				delete(c.files, p)
				delete(files, p)
			})
			delete(c.dirs, prefix)
		}
	}
	return c
}
