package server

// History for people (DESIGN §8): what each retained publication changed,
// a file as it was, and the trees of two generations compared.
//
// Data flow:
//
//	`current` ─publications(from, to)─▶ the retained publications of a
//	           generation range (generation, publication ID, parent head,
//	           head) and the packs beyond the active chain that hold them
//	           (the ONLY code here that knows the manifest's layout)
//	         ─sync + fetchGroup──────▶ those packs in the object cache (the
//	           active chain's cache; a retained chain's in its own cache,
//	           which objectSource already falls back to)
//	head ─commit─▶ tree ID ─diffTrees─▶ changed paths (subtrees with equal
//	           IDs are skipped, so a publication's diff costs what it
//	           changed, not the notebook's size) ─▶ FileChange with the
//	           diffstat and, when asked, both versions' content
//
// The tree at generation g is the head of the newest publication at or
// below g: a generation that published nothing (a checkpoint swap) has
// the tree before it.

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// ReasonHistoryUnavailable is the INVALID_REQUEST reason for a generation
// outside the retained history (CLI history commands only).
const ReasonHistoryUnavailable = "HISTORY_UNAVAILABLE"

// Its default message lives here rather than in errmap.go's table, whose
// alignment the longer key would reflow.
// LatestGeneration as a generation argument means the accepted head.
const LatestGeneration = ^uint64(0)

// FileChange is one file that differs between two trees, with its line
// delta and, when asked for, both versions (Old is nil when the file was
// added, New when it was removed).
type FileChange struct {
	FileStat
	Added, Removed bool
	Old, New       []byte
}

// HistoryEntry is one retained publication and what it changed.
type HistoryEntry struct {
	Generation uint64
	Time       time.Time
	Message    string
	Author     string // who published it, as claimed; "" when unknown (formats before v4)
	Files      []FileChange
}

// HistoryQuery selects publications for History, newest first.
type HistoryQuery struct {
	Limit   int       // at most this many (1..maxLog)
	Path    string    // only publications that changed this file or directory ("" = all)
	Since   time.Time // only publications at or after (zero = no bound)
	Until   time.Time // only publications at or before (zero = no bound)
	Content bool      // load both versions of each file (for a patch)
	// Author: only publications whose recorded author it matches (nil =
	// all). A publication of unknown author (formats before v4, or a
	// writer that claimed none) never matches: there is nothing to match.
	Author *regexp.Regexp
}

// publication is one retained accepted publication.
type publication struct {
	Generation  uint64
	Publication string
	Parent      cas.ID // the head it was published on (zero for the first)
	Head        cas.ID
	Author      string // as the store recorded it (format v4); "" when unknown
}

// packGroup is a set of packs to fetch into the cache named key so that
// objects of retained publications can be read.
type packGroup struct {
	key   string
	packs []remote.PackRef
	// through is the newest generation whose packs are in packs: a chain
	// is listed only as far as a reader asks (ChainsBetween), and a later
	// read further along it fetches the rest.
	through uint64
}

// retained is what publications returns for a generation range.
type retained struct {
	pubs  []publication // those in the range, oldest first
	extra []packGroup   // packs beyond the active chain that hold them
}

// publications returns the retained publications whose generation lies in
// [from, to] and at or above ret.Oldest (older ones that `current` still
// lists cannot be shown: the tree they were made on is gone). It is the
// one place history reads the manifest's layout (the increments of the
// active chain and of the retained chains, format v1 from `current`, v2
// through remote.Notebook.ChainsBetween, which reads only the segments of
// the chains that hold the range, through to; every chain's packs hold the
// trees of its increments and of its checkpoint, the parent of its first
// increment).
func (e *Engine) publications(ctx context.Context, state remote.State, ret remote.Retention, from, to uint64) (retained, error) {
	var r retained
	m := state.Manifest
	if m == nil || ret.Oldest == 0 {
		return r, nil
	}
	from = max(from, ret.Oldest)
	if from > to {
		return r, nil
	}
	chains := m.Chains()
	keyOf := objcache.KeyOf
	if m.Version >= 2 {
		// Store format v2: the history is in segments (remote.Notebook.
		// Chains reads them); a cache caught up through rollups holds the
		// head's closure but not older commits, so the active chain's
		// packs are fetched too when a publication in it is asked for.
		var err error
		if chains, err = e.notebook.ChainsBetween(ctx, state, ret.Floor, from, to); err != nil {
			return r, err
		}
		keyOf = func(c remote.Chain) string { return objcache.KeyAt(c.Checkpoint) }
	}
	n := 0
	for _, c := range chains {
		n += len(c.Increments)
	}
	r.pubs = make([]publication, 0, n)
	// The chains come active first, then older, each oldest first: read
	// from the last, the publications come out in order, which the sort
	// below then only checks.
	for i := len(chains) - 1; i >= 0; i-- {
		c := chains[i]
		if c.Partial {
			continue // below ret.Oldest: listed, not readable
		}
		hit := false
		for _, inc := range c.Increments {
			if inc.Generation >= from && inc.Generation <= to {
				r.pubs = append(r.pubs, publication{Generation: inc.Generation, Publication: inc.Publication, Parent: inc.Parent, Head: inc.Head, Author: inc.Author})
				hit = true
			}
		}
		if hit && (i > 0 || m.Version >= 2) {
			r.extra = append(r.extra, packGroup{key: keyOf(c), packs: c.Packs(), through: c.Increments[len(c.Increments)-1].Generation})
		}
	}
	// The groups as before: the active chain's first.
	slices.Reverse(r.extra)
	if !slices.IsSortedFunc(r.pubs, byGeneration) {
		slices.SortFunc(r.pubs, byGeneration)
	}
	return r, nil
}

func byGeneration(a, b publication) int { return cmp.Compare(a.Generation, b.Generation) }

// historyView reads the retained history of one observed state.
type historyView struct {
	e       *Engine
	ctx     context.Context
	state   remote.State
	src     *objcache.Source
	ret     remote.Retention
	fetched map[string]uint64 // cache key: the newest generation fetched
	commits map[cas.ID]cas.Commit
}

// openHistory reads `current`, syncs the active chain's cache and learns
// how far back the history reads.
func (e *Engine) openHistory(ctx context.Context) (*historyView, error) {
	state, err := e.notebook.ReadCurrent(ctx)
	if err != nil {
		return nil, e.fail("read current", err)
	}
	chain, err := e.sync(ctx, state)
	if err != nil {
		return nil, err
	}
	ret, err := e.notebook.Retention(ctx, state)
	if err != nil {
		return nil, e.fail("read history", err)
	}
	return &historyView{e: e, ctx: ctx, state: state, src: e.caches.Source(chain), ret: ret, fetched: map[string]uint64{}, commits: map[cas.ID]cas.Commit{}}, nil
}

// pubs returns the retained publications in [from, to], oldest first,
// with their packs in the cache.
func (h *historyView) pubs(from, to uint64) ([]publication, error) {
	r, err := h.e.publications(h.ctx, h.state, h.ret, from, to)
	if err != nil {
		return nil, h.e.fail("read history", err)
	}
	for _, g := range r.extra {
		if err := h.fetch(g); err != nil {
			return nil, err
		}
	}
	return r.pubs, nil
}

// fetch puts g's packs in the cache once per view.
func (h *historyView) fetch(g packGroup) error {
	if t, ok := h.fetched[g.key]; ok && t >= g.through {
		return nil
	}
	if err := h.e.fetchGroup(h.ctx, g); err != nil {
		return err
	}
	h.fetched[g.key] = max(h.fetched[g.key], g.through)
	// The source lists the chain caches once, on its first miss: one
	// created since would stay unread (a log's second window reaching an
	// older chain). Listing again costs a directory read; the caches
	// themselves stay open in the engine.
	h.src.Rescan()
	return nil
}

// fetchGroup makes the cache named g.key hold g's packs (each verified by
// remote and cas before it is kept).
func (e *Engine) fetchGroup(ctx context.Context, g packGroup) error {
	c, err := e.caches.Open(g.key)
	if err != nil {
		return mapErr(err)
	}
	missing := objcache.MissingPacks(c.Store(), g.packs)
	if len(missing) > 0 {
		if err := c.Store().Refresh(); err != nil {
			return mapErr(err)
		}
		missing = objcache.MissingPacks(c.Store(), missing)
	}
	var got []cas.NamedPack
	for _, ref := range missing {
		data, err := e.notebook.FetchPack(ctx, ref)
		if err != nil {
			e.storeTrouble(err)
			return packErr(err)
		}
		got = append(got, cas.NamedPack{Name: objcache.PackName(ref), Data: data})
	}
	if err := c.Store().AddPacks(got); err != nil {
		return packErr(err)
	}
	return nil
}

// unavailableTree is HISTORY_UNAVAILABLE for the tree at generation g
// (show GEN:PATH, diff, restore): it names the oldest generation whose
// files can be read.
func (h *historyView) unavailableTree(g uint64) *Error {
	return h.unavailable(fmt.Sprintf("Generation %d is outside the retained history; the oldest retained generation is %d.", g, h.ret.Floor))
}

// unavailablePub is HISTORY_UNAVAILABLE for publication g (show GEN,
// revert): it names the oldest publication whose changes can be shown.
func (h *historyView) unavailablePub(g uint64) *Error {
	if h.ret.Oldest == 0 {
		return h.unavailable(fmt.Sprintf("Generation %d is outside the retained history, which keeps no publication whose changes can be shown; the oldest retained generation is %d, whose files show GEN:PATH, diff and restore can read.", g, h.ret.Floor))
	}
	return h.unavailable(fmt.Sprintf("Generation %d is outside the retained history; the oldest retained generation is %d.", g, h.ret.Oldest))
}

func (h *historyView) unavailable(msg string) *Error {
	if h.state.Manifest == nil {
		msg = "The notebook has no publication yet."
	}
	return newError(CodeInvalidRequest, ReasonHistoryUnavailable, msg, nil)
}

func (h *historyView) current() uint64 { return h.state.Generation() }

// resolve maps LatestGeneration to the accepted generation and refuses a
// generation above it.
func (h *historyView) resolve(g uint64) (uint64, error) {
	if g == LatestGeneration {
		return h.current(), nil
	}
	if g > h.current() {
		return 0, invalidRequest(ReasonInvalidArgument, fmt.Sprintf("Generation %d is newer than the notebook, which is at generation %d.", g, h.current()))
	}
	return g, nil
}

// headAt returns the head at generation g: the head of the newest
// publication at or below g, or the oldest kept checkpoint's when there is
// none above it. The oldest readable tree is that checkpoint's (the empty
// notebook's when the history reaches generation 1).
func (h *historyView) headAt(g uint64) (uint64, cas.ID, error) {
	g, err := h.resolve(g)
	if err != nil {
		return 0, cas.ID{}, err
	}
	if g == h.current() {
		return g, h.state.Head(), nil
	}
	if g < h.ret.Floor || h.state.Manifest == nil {
		return 0, cas.ID{}, h.unavailableTree(g)
	}
	for w := uint64(16); ; w *= 4 {
		lo := max(g-min(g, w), h.ret.Floor+1)
		if lo <= g {
			pubs, err := h.pubs(lo, g)
			if err != nil {
				return 0, cas.ID{}, err
			}
			if n := len(pubs); n > 0 {
				return g, pubs[n-1].Head, nil
			}
		}
		if lo <= h.ret.Floor+1 {
			break
		}
	}
	// Nothing published since the floor: its checkpoint holds the tree.
	if cp := h.ret.FloorCheckpoint; !cp.IsGenesis() {
		if err := h.fetch(packGroup{key: objcache.KeyAt(cp), packs: []remote.PackRef{cp.Pack}, through: cp.Through}); err != nil {
			return 0, cas.ID{}, err
		}
	}
	return g, h.ret.FloorHead, nil
}

// publicationAt returns the publication accepted at generation g; ok is
// false when g is retained but published nothing (a checkpoint swap).
func (h *historyView) publicationAt(g uint64) (publication, bool, error) {
	g, err := h.resolve(g)
	if err != nil {
		return publication{}, false, err
	}
	if g <= h.ret.Floor || h.state.Manifest == nil {
		// At the floor itself the publication's parent tree is gone.
		return publication{}, false, h.unavailablePub(g)
	}
	pubs, err := h.pubs(g, g)
	if err != nil || len(pubs) == 0 {
		return publication{}, false, err
	}
	return pubs[0], true, nil
}

// commit reads (and memoises) a commit object.
func (h *historyView) commit(id cas.ID) (cas.Commit, error) {
	if c, ok := h.commits[id]; ok {
		return c, nil
	}
	o, err := h.src.Get(id)
	if err != nil {
		return cas.Commit{}, err
	}
	c, err := cas.DecodeCommit(o)
	if err != nil {
		return cas.Commit{}, err
	}
	h.commits[id] = c
	return c, nil
}

// treeID is the root tree of head (zero for the empty notebook).
func (h *historyView) treeID(head cas.ID) (cas.ID, error) {
	if head.IsZero() {
		return cas.ID{}, nil
	}
	c, err := h.commit(head)
	return c.Tree, err
}

// changes compares the trees of two heads under filter.
func (h *historyView) changes(from, to cas.ID, filter string, content bool) ([]FileChange, error) {
	a, err := h.treeID(from)
	if err != nil {
		return nil, err
	}
	b, err := h.treeID(to)
	if err != nil {
		return nil, err
	}
	var paths []pathChange
	if err := diffTrees(h.src, a, b, "", filter, &paths); err != nil {
		return nil, err
	}
	return fileChanges(paths, filter, content, func(id cas.ID) ([]byte, error) { return cas.ReadFile(h.src, id) })
}

// pathChange is one path whose file ID differs (zero: absent).
type pathChange struct {
	path     string
	old, new cas.ID
}

// diffTrees appends the files that differ between trees a and b (zero:
// empty) below dir, descending only into subtrees whose IDs differ and
// that can hold a path under filter.
func diffTrees(src cas.Source, a, b cas.ID, dir, filter string, out *[]pathChange) error {
	if a == b {
		return nil
	}
	ea, err := treeEntries(src, a)
	if err != nil {
		return err
	}
	eb, err := treeEntries(src, b)
	if err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var x, y *cas.TreeEntry
		switch {
		case j >= len(eb) || (i < len(ea) && ea[i].Name < eb[j].Name):
			x = &ea[i]
			i++
		case i >= len(ea) || eb[j].Name < ea[i].Name:
			y = &eb[j]
			j++
		default:
			x, y = &ea[i], &eb[j]
			i, j = i+1, j+1
		}
		name := x
		if name == nil {
			name = y
		}
		p := path.Join(dir, name.Name)
		if dir == "" {
			p = name.Name
		}
		if !mayHold(p, filter) {
			continue
		}
		if x != nil && y != nil && x.Kind == y.Kind && x.ID == y.ID {
			continue
		}
		var ta, tb, fa, fb cas.ID
		for _, side := range []struct {
			e        *cas.TreeEntry
			tree, fl *cas.ID
		}{{x, &ta, &fa}, {y, &tb, &fb}} {
			switch {
			case side.e == nil:
			case side.e.Kind == cas.KindTree:
				*side.tree = side.e.ID
			default:
				*side.fl = side.e.ID
			}
		}
		if (!fa.IsZero() || !fb.IsZero()) && fa != fb && matches(p, filter) {
			*out = append(*out, pathChange{path: p, old: fa, new: fb})
		}
		if !ta.IsZero() || !tb.IsZero() {
			if err := diffTrees(src, ta, tb, p, filter, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func treeEntries(src cas.Source, id cas.ID) ([]cas.TreeEntry, error) {
	if id.IsZero() {
		return nil, nil
	}
	o, err := src.Get(id)
	if err != nil {
		return nil, err
	}
	return cas.DecodeTree(o)
}

// matches reports whether file p is filter or below it ("" matches all).
func matches(p, filter string) bool {
	return filter == "" || p == filter || strings.HasPrefix(p, filter+"/")
}

// mayHold reports whether p (a file or a directory) can be or hold a path
// that matches filter.
func mayHold(p, filter string) bool {
	return matches(p, filter) || strings.HasPrefix(filter, p+"/")
}

// fileChanges turns path changes into FileChanges sorted by path, with
// the diffstat (and the contents when asked).
func fileChanges(paths []pathChange, filter string, content bool, read func(cas.ID) ([]byte, error)) ([]FileChange, error) {
	sort.Slice(paths, func(i, j int) bool { return paths[i].path < paths[j].path })
	out := make([]FileChange, 0, len(paths))
	for _, pc := range paths {
		if !matches(pc.path, filter) {
			continue
		}
		fc := FileChange{FileStat: FileStat{Path: pc.path}, Added: pc.old.IsZero(), Removed: pc.new.IsZero()}
		var err error
		if !fc.Added {
			if fc.Old, err = read(pc.old); err != nil {
				return nil, err
			}
			fc.Old = nilIfAbsent(fc.Old, true)
		}
		if !fc.Removed {
			if fc.New, err = read(pc.new); err != nil {
				return nil, err
			}
			fc.New = nilIfAbsent(fc.New, true)
		}
		fc.Insertions, fc.Deletions = merge.Stat(fc.Old, fc.New)
		if !content {
			fc.Old, fc.New = nil, nil
		}
		out = append(out, fc)
	}
	return out, nil
}

// entry is the HistoryEntry of p.
func (h *historyView) entry(p publication, filter string, content bool) (HistoryEntry, error) {
	c, err := h.commit(p.Head)
	if err != nil {
		return HistoryEntry{}, err
	}
	files, err := h.changes(p.Parent, p.Head, filter, content)
	if err != nil {
		return HistoryEntry{}, err
	}
	return HistoryEntry{Generation: p.Generation, Time: c.Time, Message: string(c.Message), Author: p.Author, Files: files}, nil
}

// NormalizePath checks a notebook-relative path argument (a file or a
// directory) and returns it in slash form without "./" or a trailing
// slash; "" and "." mean the whole notebook. Errors are *Error.
func NormalizePath(p string) (string, error) {
	p = strings.ReplaceAll(p, "\\", "/")
	if strings.HasPrefix(p, "/") || len(p) > workdir.MaxPathBytes || strings.ContainsRune(p, 0) {
		return "", invalidRequest(ReasonInvalidArgument, "A path must be relative to the notebook, at most 4,096 bytes.")
	}
	c := path.Clean("/" + p)[1:]
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", invalidRequest(ReasonInvalidArgument, "A path must stay inside the notebook (no \"..\").")
		}
	}
	return c, nil
}

// History returns retained publications, newest first, as q selects them:
// what each changed (diffstat, and both versions with q.Content). It reads
// only the publications it returns (and, with a path or time filter, the
// commits it passes over) from the object cache after syncing it.
func (e *Engine) History(ctx context.Context, q HistoryQuery) ([]HistoryEntry, error) {
	out, _, err := e.historyAfter(ctx, q, 0)
	return out, err
}

// historyAfter is History restricted to the publications above generation
// after; it also returns the state of `current` it read, whose generation
// is where the next call's after starts (Watch).
func (e *Engine) historyAfter(ctx context.Context, q HistoryQuery, after uint64) ([]HistoryEntry, remote.State, error) {
	if q.Limit <= 0 {
		return []HistoryEntry{}, remote.State{}, nil
	}
	q.Limit = min(q.Limit, maxLog)
	filter, err := NormalizePath(q.Path)
	if err != nil {
		return nil, remote.State{}, err
	}
	if err := e.Probe(ctx); err != nil {
		return nil, remote.State{}, err
	}
	var state remote.State
	out, err := withHealing(e, func() ([]HistoryEntry, error) {
		h, err := e.openHistory(ctx)
		if err != nil {
			return nil, err
		}
		state = h.state
		out := []HistoryEntry{}
		if h.ret.Oldest == 0 {
			return out, nil
		}
		oldest := max(h.ret.Oldest, after+1)
		const window = 128
		for to := h.current(); to >= oldest && len(out) < q.Limit; {
			lo := max(to-min(to, window-1), oldest)
			pubs, err := h.pubs(lo, to)
			if err != nil {
				return nil, err
			}
			for i := len(pubs) - 1; i >= 0 && len(out) < q.Limit; i-- {
				p := pubs[i]
				if q.Author != nil && (p.Author == "" || !q.Author.MatchString(p.Author)) {
					continue // before any read: the author is in the listing
				}
				if !q.Since.IsZero() || !q.Until.IsZero() {
					c, err := h.commit(p.Head)
					if err != nil {
						return nil, e.fail("read commit", err)
					}
					if (!q.Since.IsZero() && c.Time.Before(q.Since)) || (!q.Until.IsZero() && c.Time.After(q.Until)) {
						continue
					}
				}
				en, err := h.entry(p, filter, q.Content)
				if err != nil {
					return nil, e.fail("read publication", err)
				}
				if filter != "" && len(en.Files) == 0 {
					continue
				}
				out = append(out, en)
			}
			if lo == 0 {
				break
			}
			to = lo - 1
		}
		return out, nil
	})
	return out, state, err
}

// Show returns publication gen with both versions of every file it
// changed (restricted to filterPath when set). A generation that is
// retained but published nothing (a checkpoint swap took it) yields an
// entry without time, message or files.
func (e *Engine) Show(ctx context.Context, gen uint64, filterPath string) (*HistoryEntry, error) {
	filter, err := NormalizePath(filterPath)
	if err != nil {
		return nil, err
	}
	if err := e.Probe(ctx); err != nil {
		return nil, err
	}
	return withHealing(e, func() (*HistoryEntry, error) {
		h, err := e.openHistory(ctx)
		if err != nil {
			return nil, err
		}
		p, ok, err := h.publicationAt(gen)
		if err != nil {
			return nil, err
		}
		if !ok {
			return &HistoryEntry{Generation: gen, Files: []FileChange{}}, nil
		}
		en, err := h.entry(p, filter, true)
		if err != nil {
			return nil, e.fail("read publication", err)
		}
		return &en, nil
	})
}

// FileAt returns the content of the file p at generation gen. A path that
// is no file there is INVALID_REQUEST/INVALID_ARGUMENT.
func (e *Engine) FileAt(ctx context.Context, gen uint64, p string) ([]byte, error) {
	p, err := NormalizePath(p)
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, invalidRequest(ReasonInvalidArgument, "Name a file: GEN:PATH.")
	}
	if err := e.Probe(ctx); err != nil {
		return nil, err
	}
	return withHealing(e, func() ([]byte, error) {
		h, err := e.openHistory(ctx)
		if err != nil {
			return nil, err
		}
		g, head, err := h.headAt(gen)
		if err != nil {
			return nil, err
		}
		files, err := objcache.TreeOf(h.src, head)
		if err != nil {
			return nil, e.fail("read tree", err)
		}
		id, ok := files[p]
		if !ok {
			return nil, invalidRequest(ReasonInvalidArgument, fmt.Sprintf("There is no file %q at generation %d.", p, g))
		}
		c, err := cas.ReadFile(h.src, id)
		if err != nil {
			return nil, e.fail("read file", err)
		}
		return c, nil
	})
}

// Diff compares the trees at generations from and to (LatestGeneration:
// the accepted head), restricted to filterPath, with both versions of
// each changed file.
func (e *Engine) Diff(ctx context.Context, from, to uint64, filterPath string) ([]FileChange, error) {
	filter, err := NormalizePath(filterPath)
	if err != nil {
		return nil, err
	}
	if err := e.Probe(ctx); err != nil {
		return nil, err
	}
	return withHealing(e, func() ([]FileChange, error) {
		h, err := e.openHistory(ctx)
		if err != nil {
			return nil, err
		}
		_, a, err := h.headAt(from)
		if err != nil {
			return nil, err
		}
		_, b, err := h.headAt(to)
		if err != nil {
			return nil, err
		}
		out, err := h.changes(a, b, filter, true)
		if err != nil {
			return nil, e.fail("diff", err)
		}
		return out, nil
	})
}

// LocalDiff compares the directory's baseline with what is on disk now:
// what the next commit would publish (before merging with later
// publications). A directory never pulled shows every file as added.
func (e *Engine) LocalDiff(ctx context.Context, dir, filterPath string) ([]FileChange, error) {
	filter, err := NormalizePath(filterPath)
	if err != nil {
		return nil, err
	}
	return withHealing(e, func() ([]FileChange, error) {
		s, err := e.begin(ctx, dir)
		if err != nil {
			return nil, err
		}
		defer s.end()
		if err := s.open(false); err == nil {
			if _, err := s.scanL(); err != nil {
				return nil, err
			}
		} else if s.base == nil {
			s.scan = &scanResult{}
		} else {
			return nil, err
		}
		if s.base != nil {
			state, err := e.notebook.ReadCurrent(ctx)
			if err != nil {
				return nil, e.fail("read current", err)
			}
			s.adoptPublished(state)
			chain, err := e.sync(ctx, state)
			if err != nil {
				return nil, err
			}
			s.src = e.caches.Source(chain)
		}
		base := s.baseFiles()
		var paths []pathChange
		for p, id := range s.scan.files {
			if old, ok := base[p]; (!ok || old != id) && matches(p, filter) {
				paths = append(paths, pathChange{path: p, old: old, new: id})
			}
		}
		for p, id := range base {
			if _, ok := s.scan.files[p]; !ok && matches(p, filter) {
				paths = append(paths, pathChange{path: p, old: id})
			}
		}
		out, err := fileChanges(paths, filter, true, s.load)
		if err != nil {
			return nil, e.fail("read content", err)
		}
		s.saveStats()
		return out, nil
	})
}
