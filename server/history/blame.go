package history

// Blame: for each line of a file as the notebook holds it (the accepted
// head), the publication that last changed it.
//
// What "changed a line" means. Publications form one line of history: each
// is its writer's merged result published on the head before it, so what a
// publication changed in a file is the line diff (merge.LineDiff, the diff
// log -p shows) between the file at its parent and at its head. A line is
// attributed to the newest publication whose diff inserted it, where a
// replaced line counts as inserted (a line edited in place is new) and so
// does a line moved within the file (a line diff sees a removal and an
// insertion; moves are not tracked). Lines that a publication carried over
// unchanged keep their older attribution, which includes the lines its
// writer merged in from others: those were already in its parent, published
// by their own writers, so a merge never takes over a line it did not
// write. A file removed and added again starts over: its lines are the
// re-adding publication's. Renames are not followed (there are none in the
// format: a rename is a removal and an addition). A line that the oldest
// retained publication still found in the file is reported as older than
// the retained history, "before generation N" with N that publication's
// generation.
//
// The algorithm walks the retained publications from the newest to the
// oldest, holding the file's version at the publication being read and,
// for each line of that version, the line of the head's file it became (or
// none). Which publications changed the file, and its ID after each, comes
// from the changed-paths index (blame_index.go), which a walk completes
// first for the publications it lacks; the file before the oldest retained
// publication takes one path lookup. Publications that did not change the
// file are passed over; one that changed it is diffed (old version against
// the held one): the held lines inside its edits that still stand for a
// head line are attributed to it, the unchanged ones are mapped to their
// lines in the old version, which becomes the held one. The walk stops as
// soon as every asked line has its publication, or when the file did not
// exist before a publication.
//
// Cost, with the index complete: the list of retained publications and the
// index, read once; per publication that changed the file, its file object
// and the chunks it changed, each decompressed, verified and its LFs
// counted once (versionReader keeps the others from the version read
// before), read ahead of the walk by another goroutine and two decoders;
// then a diff of the regions where the two versions' chunk lists differ
// (blame_diff.go), which compares those chunks' bytes and hashes only the
// lines that differ, so that neither version is copied or split. A step
// whose regions' changes are not provably LineDiff's (a changed line that
// the other version also has: a line moved, a blank line added) diffs the
// two whole versions instead, as LineDiff sets their common start and end
// aside by comparing bytes. At the end, the commit (time, message) of each
// publication that kept lines. Lines from the oldest retained publication
// make the walk read the whole retained history: with 10,000 publications
// of which 2,000 changed a 2,000-line file, about 3,000 chunks decoded and
// 2,000 region diffs, none of them whole, about 200 to 250 ms of CPU in
// all for the CLI process, of which about 90 ms decoding chunks and 55 ms
// the list of publications: reading, checking and decoding over a thousand
// history segments (four at a time) and checking that the chains' packs
// are cached (bench/blame_test.go measures it beside git blame and log). Completing the index costs, per publication it lacks, a commit and
// a tree diff (the root tree and the subtrees that changed), each read
// from the chain cache that holds it (chainsSource). A cache that lacks the
// history's packs fetches all of them first, once. A blame of a whole file
// records its answer in the private cache (blame_cache.go): the next blame
// of the file walks only the publications accepted since.
//
// The author column is the publication's author as the store format
// records it; today's format records none, so every author is unknown ("").

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
)

// BlameLine is one line of the file and the publication that last changed
// it.
type BlameLine struct {
	Number int    // one-based, in the head's file
	Text   []byte // the line's bytes, its line ending included
	// Generation is the publication that last changed the line; when
	// Before is set the line is older than the retained history and
	// Generation is the oldest retained publication, which found it there.
	Generation uint64
	Before     bool
	Time       time.Time // the publication's time (zero with Before)
	Message    string    // the publication's message ("" with Before)
	Author     string    // the publication's author; "" when unknown
}

// BlameQuery names the file and the lines the engine's Blame reports.
type BlameQuery struct {
	Path string
	// Start and End select the one-based lines [Start, End]; zero Start
	// means from the first line, zero End to the last.
	Start, End int
}

// Check returns q with its path normalised, or an *ArgumentError when q
// names no file or no range of lines: the checks that come before the
// store is read.
func (q BlameQuery) Check() (BlameQuery, error) {
	p, err := NormalizePath(q.Path)
	if err != nil {
		return BlameQuery{}, err
	}
	if p == "" {
		return BlameQuery{}, &ArgumentError{Msg: "Name a file of the notebook."}
	}
	if q.Start < 0 || q.End < 0 || (q.End > 0 && q.End < max(q.Start, 1)) {
		return BlameQuery{}, argument("The line range %d,%d is not a range of lines (want START,END with 1 <= START <= END).", q.Start, q.End)
	}
	q.Path = p
	return q, nil
}

// BlameResult is the file at the accepted head, line by line.
type BlameResult struct {
	Path       string
	Generation uint64 // the accepted head's generation
	Lines      []BlameLine
	// IndexComputed counts the publications whose changed paths the walk
	// computed because the index lacked them.
	IndexComputed int
}

// blameWalk is the state of one walk: the file's version at the
// publication being read and, per line of it, the head line it became.
type blameWalk struct {
	h        *View
	src      cas.Source // trees and commits
	files    *versionReader
	path     []string // the path's segments
	lookups  map[treeAt]cas.ID
	lines    []BlameLine  // the head's lines asked for
	headText []byte       // the head's version of the file
	held     *fileVersion // the file at the publication being read
	heldID   cas.ID
	diff     *versionDiffer // made when the walk diffs
	track    []int          // per line of held: index in lines, or -1
	spare    []int          // the previous track's memory, for the next
	left     int            // lines not attributed yet
	// heads holds the head of each publication the walk gave lines to:
	// their commits (time, message) are read once the walk is over, for
	// those publications only.
	heads map[uint64]cas.ID
	// indexComputed counts the publications whose changed paths were not
	// in the index (blame_index.go).
	indexComputed int
	// at is the head whose version of the file is held; cache the lines
	// of a blame at an older head (blame_cache.go), nil when none fits.
	at       cas.ID
	cache    *blameCache
	cachedAt cas.ID // the head of the cache the lines left came from
}

// treeAt is a tree seen at a depth of the path: its lookup of the rest of
// the path does not change.
type treeAt struct {
	id    cas.ID
	depth int
}

// Blame attributes each line of the file q.Path, as the accepted head
// holds it, to the retained publication that last changed it (see the
// file's comment for the rule), for the one-based lines [q.Start, q.End]
// (zero Start: from the first line, zero End: to the last). q has passed
// Check. A path that is no file at the head, or a line range outside the
// file, is an *ArgumentError.
func (h *View) Blame(q BlameQuery) (*BlameResult, error) {
	p, start, end := q.Path, q.Start, q.End
	src := &chainsSource{s: h.src}
	w := &blameWalk{h: h, src: src, files: &versionReader{src: src, holder: src.holder}, path: strings.Split(p, "/"), lookups: map[treeAt]cas.ID{}, heads: map[uint64]cas.ID{}}
	head := h.state.Head()
	id, err := w.fileAt(head)
	if err != nil {
		return nil, err
	}
	gen := h.Current()
	if id.IsZero() {
		return nil, argument("There is no file %q in the notebook at generation %d.", p, gen)
	}
	if w.held, err = w.files.read(id); err != nil {
		return nil, err
	}
	w.heldID, w.headText = id, w.held.appendAll(nil)
	n := merge.CountLines(w.headText)
	if start == 0 {
		start = 1
	}
	if end == 0 || end > n {
		end = n
	}
	if start > max(n, 1) {
		return nil, argument("The file %q has %d lines at generation %d; the range starts at line %d.", p, n, gen, start)
	}
	res := &BlameResult{Path: p, Generation: gen, Lines: []BlameLine{}}
	if n == 0 {
		return res, nil
	}
	w.track = make([]int, n)
	for i := range w.track {
		w.track[i] = -1
	}
	offs := lineOffsets(w.headText)
	for i := start - 1; i < end; i++ {
		w.track[i] = len(w.lines)
		w.lines = append(w.lines, BlameLine{Number: i + 1, Text: w.headText[offs[i]:offs[i+1]]})
	}
	w.left = len(w.lines)
	w.at, w.cache = head, loadBlameCache(h.dir, p)
	if err := w.walk(); err != nil {
		return nil, err
	}
	if err := w.describe(); err != nil {
		return nil, err
	}
	res.Lines, res.IndexComputed = w.lines, w.indexComputed

	if start == 1 && end == n && w.cachedAt != head { // else the cache holds this answer
		saveBlameCache(h.dir, h.log, res, head, id)
	}
	return res, nil
}

// walk reads the retained publications newest first until every line has
// its publication. The list of retained publications is read once for the
// whole history, which a walk whose lines are old reaches the end of,
// where History's windows would read each chain's list again for each
// window. With a cache that lacks them, the packs of the whole retained
// history are fetched, once.
func (w *blameWalk) walk() error {
	h := w.h
	if w.cached() {
		return nil // a blame at this very head: the history is not read
	}
	if h.ret.Oldest == 0 {
		// No retained publication shows its changes: every line was there
		// before the generation after the floor.
		w.before(h.ret.Floor + 1)
		return nil
	}
	pubs, err := h.pubs(h.ret.Oldest, h.Current())
	if err != nil {
		return err
	}
	if len(pubs) == 0 {
		w.before(h.ret.Oldest)
		return nil
	}
	changes, computed, err := h.changedPaths(w.src, pubs)
	if err != nil {
		return err
	}
	w.indexComputed = computed
	// The file after each publication that changed it; before the oldest,
	// one path lookup.
	first, err := w.fileAt(pubs[0].Parent)
	if err != nil {
		return err
	}
	path := strings.Join(w.path, "/")
	after := make([]cas.ID, len(pubs)) // zero where unchanged
	changed := make([]bool, len(pubs))
	for i := range pubs {
		for _, c := range changes[i] {
			if c.path == path {
				after[i], changed[i] = c.id, true
				break
			}
		}
	}
	// before returns the file at the parent of publication i.
	before := func(i int) cas.ID {
		for k := i - 1; k >= 0; k-- {
			if changed[k] {
				return after[k]
			}
		}
		return first
	}
	w.diff = newVersionDiffer(w.headText)
	// The versions and commits of the publications that changed the file
	// are read ahead, in their order, by another goroutine, while this one
	// diffs: reading (chunks decompressed and verified) and diffing cost
	// about the same.
	var jobs []readAhead
	for i := len(pubs) - 1; i >= 0; i-- {
		if changed[i] && before(i) != after[i] {
			jobs = append(jobs, readAhead{file: before(i)})
		}
	}
	ra := w.startReadAhead(jobs)
	defer ra.stop()
	for i := len(pubs) - 1; i >= 0; i-- {
		if i%256 == 0 {
			if err := h.ctx.Err(); err != nil {
				return err
			}
		}
		if w.cached() {
			return nil
		}
		if changed[i] && before(i) != after[i] {
			v, ok := <-ra.out
			if !ok {
				return h.ctx.Err() // stopped: only by a cancelled context
			}
			if v.err == nil && v.version != nil {
				v.err = v.version.wait()
			}
			if v.err != nil {
				return v.err
			}
			done, err := w.step(pubs[i], before(i), after[i], v.version)
			if err != nil || done {
				return err
			}
		}
		w.at = pubs[i].Parent
	}
	if w.cached() {
		return nil
	}
	w.before(h.ret.Oldest)
	return nil
}

// readAhead is one version to read: the file (zero: none) at the parent
// of a publication.
type readAhead struct {
	file    cas.ID
	version *fileVersion
	err     error
}

const readAheadVersions = 16

// blameDecoders is the number of goroutines decoding a walk's chunks.
const blameDecoders = 2

// readAheads is the goroutine reading a walk's versions ahead of it. It
// alone reads objects while it runs (the sources are not shared between
// goroutines), but for the chunks it hands to its decoders, which read
// them from the caches' stores directly; stop waits for them all to end.
type readAheads struct {
	out  chan readAhead
	quit chan struct{}
	done chan struct{}
}

func (w *blameWalk) startReadAhead(jobs []readAhead) *readAheads {
	// Up to readAheadVersions versions wait for the diffs, so that the
	// reader runs on while a few long diffs (a line moved far) take their
	// time; the memory is those versions' new chunks.
	ra := &readAheads{out: make(chan readAhead, readAheadVersions), quit: make(chan struct{}), done: make(chan struct{})}
	// The new chunks are decoded by blameDecoders goroutines: reading a
	// version is nearly all decompression and verification, and with
	// them the reads take the cores the diffs leave.
	work := make(chan *chunkRead, 4*readAheadVersions)
	var decoders sync.WaitGroup
	for range blameDecoders {
		decoders.Go(func() { decodeChunks(work) })
	}
	w.files.decoders = work
	go func() {
		defer close(ra.done)
		defer decoders.Wait()
		defer close(work)
		defer close(ra.out)
		for _, j := range jobs {
			if !j.file.IsZero() {
				j.version, j.err = w.files.read(j.file)
			}
			select {
			case ra.out <- j:
			case <-ra.quit:
				return
			case <-w.h.ctx.Done():
				return
			}
			if j.err != nil {
				return
			}
		}
	}()
	return ra
}

func (ra *readAheads) stop() {
	close(ra.quit)
	<-ra.done
}

// cached reports whether the walk has reached the cached head and the
// cache gave the lines left their publications; a cache that does not fit
// is dropped.
func (w *blameWalk) cached() bool {
	if w.cache == nil || w.at != w.cache.head {
		return false
	}
	ok := w.fromCache()
	if ok {
		w.cachedAt = w.cache.head
	}
	w.cache = nil
	return ok
}

// before marks the lines left as older than the retained history.
func (w *blameWalk) before(gen uint64) {
	for i := range w.lines {
		if w.lines[i].Generation == 0 {
			w.lines[i].Generation, w.lines[i].Before = gen, true
		}
	}
}

// step reads publication p, which changed the file from before to after
// (zero: no file), to old (the file at before); done is true when no line
// is left.
func (w *blameWalk) step(p Publication, before, after cas.ID, old *fileVersion) (done bool, err error) {
	if after != w.heldID {
		// Publications chain (each one's parent is the head of the one
		// before it), so the file at a publication's head is the one held.
		return false, fmt.Errorf("%w: publication %d holds another version of the file than the next one's parent", cas.ErrCorrupt, p.Generation)
	}
	attribute := func(held int) {
		if k := w.track[held]; k >= 0 {
			w.lines[k].Generation, w.lines[k].Author = p.Generation, authorOf(p)
			w.heads[p.Generation] = p.Head
			w.left--
		}
	}
	if before.IsZero() {
		// The file was added here: every line held is new.
		for i := range w.track {
			attribute(i)
		}
		return true, nil
	}
	edits := w.diff.diff(old, w.held)
	// old's lines: held's, less those the edits inserted, plus those they
	// removed (counting them again would cost a pass over the file).
	n := len(w.track)
	for _, ed := range edits {
		n += ed.OldEnd - ed.OldStart - (ed.NewEnd - ed.NewStart)
	}
	track := slices.Grow(w.spare[:0], n)[:n]
	oi, ni := 0, 0 // the next unchanged lines of old and held
	for _, ed := range edits {
		for ; ni < ed.NewStart; oi, ni = oi+1, ni+1 {
			track[oi] = w.track[ni]
		}
		for ; oi < ed.OldEnd; oi++ {
			track[oi] = -1 // removed or replaced here: no head line
		}
		for ; ni < ed.NewEnd; ni++ {
			attribute(ni)
		}
	}
	for ; ni < len(w.track); oi, ni = oi+1, ni+1 {
		track[oi] = w.track[ni]
	}
	w.held, w.heldID, w.track, w.spare = old, before, track, w.track
	return w.left == 0, nil
}

// describe gives the lines the walk attributed their publication's time
// and message.
func (w *blameWalk) describe() error {
	type about struct {
		t   time.Time
		msg string
	}
	seen := make(map[uint64]about, len(w.heads))
	for g, head := range w.heads {
		c, err := w.commit(head)
		if err != nil {
			return err
		}
		seen[g] = about{c.Time, string(c.Message)}
	}
	for i := range w.lines {
		l := &w.lines[i]
		if a, ok := seen[l.Generation]; ok && !l.Before {
			l.Time, l.Message = a.t, a.msg
		}
	}
	return nil
}

// commit reads a commit object: those of the heads the path is looked up
// in and of the publications whose lines a walk reports, few of them
// twice, so none is kept.
func (w *blameWalk) commit(id cas.ID) (cas.Commit, error) {
	return cas.ReadCommit(w.src, id)
}

// chainsSource reads the objects of a walk over the whole history, which
// lie in the caches of many chains: it asks the open chain caches whether
// they hold the object (which costs no I/O), starting with the one that
// held the last object (a walk reads a chain's publications one after the
// other), and reads it from the one that does, where the engine's source
// would try each newer cache first, and a miss in a cache checks its
// directory for packs added since (a file system call per cache per
// object). What no open cache holds goes through the engine's source,
// which opens more caches, refreshes and reports as usual.
type chainsSource struct {
	s    Objects
	last *cas.Store
}

// holder returns the store of the open chain cache that holds id, or nil.
func (h *chainsSource) holder(id cas.ID) *cas.Store {
	if h.last != nil && h.last.Has(id) {
		return h.last
	}
	if st := h.s.Holder(id); st != nil {
		h.last = st
		return st
	}
	return nil
}

func (h *chainsSource) Get(id cas.ID) (cas.Object, error) {
	if st := h.holder(id); st != nil {
		return st.Get(id)
	}
	return h.s.Get(id)
}

// authorOf is the author the store recorded for publication p: format v4
// records one when the writer claimed it; older formats none, so ""
// (unknown).
func authorOf(p Publication) string { return p.Author }

// fileAt returns the ID of the walked file in head's tree (zero when it
// holds no file there, or head is the empty notebook). Every tree read on
// the way remembers the answer: consecutive publications share most
// subtrees, so a lookup usually reads only the root tree.
func (w *blameWalk) fileAt(head cas.ID) (cas.ID, error) {
	if head.IsZero() {
		return cas.ID{}, nil // the empty notebook
	}
	c, err := w.commit(head)
	if err != nil {
		return cas.ID{}, err
	}
	tree := c.Tree
	var seen []treeAt
	found := cas.ID{}
	for depth := 0; !tree.IsZero(); depth++ {
		key := treeAt{tree, depth}
		if id, ok := w.lookups[key]; ok {
			found = id
			break
		}
		seen = append(seen, key)
		entries, err := treeEntries(w.src, tree)
		if err != nil {
			return cas.ID{}, err
		}
		name := w.path[depth]
		i := sort.Search(len(entries), func(i int) bool { return entries[i].Name >= name })
		tree = cas.ID{}
		if i < len(entries) && entries[i].Name == name {
			isTree := entries[i].Kind == cas.KindTree
			switch last := depth == len(w.path)-1; {
			case last && !isTree:
				found = entries[i].ID
			case !last && isTree:
				tree = entries[i].ID
			}
		}
	}
	for _, k := range seen {
		w.lookups[k] = found
	}
	return found, nil
}

// lineOffsets returns the offset of every line of content, then
// len(content), by the diffstat's line rule.
func lineOffsets(content []byte) []int {
	offs := make([]int, 0, merge.CountLines(content)+1)
	for i := 0; i < len(content); {
		offs = append(offs, i)
		k := bytes.IndexByte(content[i:], '\n')
		if k < 0 {
			break
		}
		i += k + 1
	}
	return append(offs, len(content))
}
