package history

// A View reads the retained history of one observed state (DESIGN's
// history for people): what each retained publication changed, a file as
// it was, and the trees of two generations compared.
//
// Data flow:
//
//	`current` ─publications(from, to)─▶ the retained publications of a
//	           generation range (generation, publication ID, parent head,
//	           head) and the packs beyond the active chain that hold them
//	           (the ONLY code here that knows the manifest's layout)
//	         ─Engine.Fetch──────────▶ those packs in the object cache (the
//	           active chain's cache; a retained chain's in its own cache,
//	           which the engine's Objects already fall back to)
//	head ─commit─▶ tree ID ─diffTrees─▶ changed paths (subtrees with equal
//	           IDs are skipped, so a publication's diff costs what it
//	           changed, not the notebook's size) ─▶ Change with the
//	           diffstat and, when asked, both versions' content
//
// The tree at generation g is the head of the newest publication at or
// below g: a generation that published nothing (a checkpoint swap) has
// the tree before it.

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Latest as a generation argument means the accepted head.
const Latest = ^uint64(0)

// Engine is what a View asks of the engine that opened it.
type Engine interface {
	// ChainsBetween lists the chains of state's history that hold the
	// generations [from, to] above floor (remote.Notebook.ChainsBetween).
	ChainsBetween(ctx context.Context, state remote.State, floor, from, to uint64) ([]remote.Chain, error)
	// KeyOf names the cache of a version-1 chain, KeyAt the cache of the
	// chain (format v2 on) based on a checkpoint.
	KeyOf(c remote.Chain) string
	KeyAt(cp remote.Checkpoint) string
	// Fetch makes the cache named g.Key hold g's packs, each verified
	// before it is kept. Its error is returned as it is.
	Fetch(ctx context.Context, g Group) error
}

// Objects is the object cache a View reads.
type Objects interface {
	cas.Source
	// Holder returns the store of an open cache that holds id, found
	// without I/O, or nil: a walk over the whole history reads each
	// object from the cache that holds it without asking the others.
	Holder(id cas.ID) *cas.Store
	// Rescan makes the next miss list the caches again: one that a Fetch
	// created since would otherwise stay unread.
	Rescan()
}

// Observed is what a View reads: one observed state of `current`, the
// object cache synced to it, and how far back its history reads.
type Observed struct {
	State     remote.State
	Retention remote.Retention
	Objects   Objects
	Engine    Engine
	// Dir is the store's directory in P, where blame keeps its cache and
	// the changed-paths index; Log is where their failures are told.
	Dir string
	Log *slog.Logger
}

// View reads the retained history of one observed state.
type View struct {
	eng     Engine
	ctx     context.Context
	state   remote.State
	src     Objects
	ret     remote.Retention
	dir     string
	log     *slog.Logger
	fetched map[string]uint64 // cache key: the newest generation fetched
	commits map[cas.ID]cas.Commit
}

// NewView returns the View of o.
func NewView(ctx context.Context, o Observed) *View {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &View{eng: o.Engine, ctx: ctx, state: o.State, src: o.Objects, ret: o.Retention, dir: o.Dir, log: log, fetched: map[string]uint64{}, commits: map[cas.ID]cas.Commit{}}
}

// State is the state of `current` the View reads.
func (h *View) State() remote.State { return h.state }

// Retention is how far back the View's history reads.
func (h *View) Retention() remote.Retention { return h.ret }

// pubs returns the retained publications in [from, to], oldest first,
// with their packs in the cache.
func (h *View) pubs(from, to uint64) ([]Publication, error) {
	r, err := publications(h.ctx, h.eng, h.state, h.ret, from, to)
	if err != nil {
		return nil, fail("read history", err)
	}
	for _, g := range r.extra {
		if err := h.fetch(g); err != nil {
			return nil, err
		}
	}
	return r.pubs, nil
}

// fetch puts g's packs in the cache once per view.
func (h *View) fetch(g Group) error {
	if t, ok := h.fetched[g.Key]; ok && t >= g.Through {
		return nil
	}
	if err := h.eng.Fetch(h.ctx, g); err != nil {
		return err
	}
	h.fetched[g.Key] = max(h.fetched[g.Key], g.Through)
	// The source lists the chain caches once, on its first miss: one
	// created since would stay unread (a log's second window reaching an
	// older chain). Listing again costs a directory read; the caches
	// themselves stay open in the engine.
	h.src.Rescan()
	return nil
}

// unavailableTree is HISTORY_UNAVAILABLE for the tree at generation g
// (show GEN:PATH, diff, restore): it names the oldest generation whose
// files can be read.
func (h *View) unavailableTree(g uint64) error {
	return h.unavailable(fmt.Sprintf("Generation %d is outside the retained history; the oldest retained generation is %d.", g, h.ret.Floor))
}

// unavailablePub is HISTORY_UNAVAILABLE for publication g (show GEN,
// revert): it names the oldest publication whose changes can be shown.
func (h *View) unavailablePub(g uint64) error {
	if h.ret.Oldest == 0 {
		return h.unavailable(fmt.Sprintf("Generation %d is outside the retained history, which keeps no publication whose changes can be shown; the oldest retained generation is %d, whose files show GEN:PATH, diff and restore can read.", g, h.ret.Floor))
	}
	return h.unavailable(fmt.Sprintf("Generation %d is outside the retained history; the oldest retained generation is %d.", g, h.ret.Oldest))
}

func (h *View) unavailable(msg string) error {
	if h.state.Manifest == nil {
		msg = "The notebook has no publication yet."
	}
	return &UnavailableError{Msg: msg}
}

// Current is the accepted generation of the View's state.
func (h *View) Current() uint64 { return h.state.Generation() }

// resolve maps Latest to the accepted generation and refuses a
// generation above it.
func (h *View) resolve(g uint64) (uint64, error) {
	if g == Latest {
		return h.Current(), nil
	}
	if g > h.Current() {
		return 0, argument("Generation %d is newer than the notebook, which is at generation %d.", g, h.Current())
	}
	return g, nil
}

// HeadAt returns the head at generation g (Latest: the accepted head),
// and g resolved: the head of the newest publication at or below g, or
// the oldest kept checkpoint's when there is none above it. The oldest
// readable tree is that checkpoint's (the empty notebook's when the
// history reaches generation 1).
func (h *View) HeadAt(g uint64) (uint64, cas.ID, error) {
	g, err := h.resolve(g)
	if err != nil {
		return 0, cas.ID{}, err
	}
	if g == h.Current() {
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
		if err := h.fetch(Group{Key: h.eng.KeyAt(cp), Packs: []remote.PackRef{cp.Pack}, Through: cp.Through}); err != nil {
			return 0, cas.ID{}, err
		}
	}
	return g, h.ret.FloorHead, nil
}

// PublicationAt returns the publication accepted at generation g; ok is
// false when g is retained but published nothing (a checkpoint swap).
func (h *View) PublicationAt(g uint64) (Publication, bool, error) {
	g, err := h.resolve(g)
	if err != nil {
		return Publication{}, false, err
	}
	if g <= h.ret.Floor || h.state.Manifest == nil {
		// At the floor itself the publication's parent tree is gone.
		return Publication{}, false, h.unavailablePub(g)
	}
	pubs, err := h.pubs(g, g)
	if err != nil || len(pubs) == 0 {
		return Publication{}, false, err
	}
	return pubs[0], true, nil
}

// commit reads (and memoises) a commit object.
func (h *View) commit(id cas.ID) (cas.Commit, error) {
	if c, ok := h.commits[id]; ok {
		return c, nil
	}
	c, err := cas.ReadCommit(h.src, id)
	if err != nil {
		return cas.Commit{}, err
	}
	h.commits[id] = c
	return c, nil
}

// treeID is the root tree of head (zero for the empty notebook).
func (h *View) treeID(head cas.ID) (cas.ID, error) {
	if head.IsZero() {
		return cas.ID{}, nil
	}
	c, err := h.commit(head)
	return c.Tree, err
}

// Files returns the flat file map of the commit head (empty for zero).
func (h *View) Files(head cas.ID) (map[string]cas.ID, error) {
	if head.IsZero() {
		return map[string]cas.ID{}, nil
	}
	c, err := cas.ReadCommit(h.src, head)
	if err != nil {
		return nil, err
	}
	return cas.ReadTree(h.src, c.Tree)
}

// changes compares the trees of two heads under filter.
func (h *View) changes(from, to cas.ID, filter string, content bool) ([]Change, error) {
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

// Entry is one publication and what it changed: the engine's result for
// History, Show and Log (Log's carry the diffstat only: no contents, and
// Added and Removed unset).
type Entry struct {
	Generation uint64
	Time       time.Time
	Message    string
	Author     string // who published it, as claimed; "" when unknown (formats before v4)
	Files      []Change
}

// entry is the Entry of p.
func (h *View) entry(p Publication, filter string, content bool) (Entry, error) {
	c, err := h.commit(p.Head)
	if err != nil {
		return Entry{}, err
	}
	files, err := h.changes(p.Parent, p.Head, filter, content)
	if err != nil {
		return Entry{}, err
	}
	return Entry{Generation: p.Generation, Time: c.Time, Message: string(c.Message), Author: p.Author, Files: files}, nil
}

// Query selects publications for the engine's History, newest first.
type Query struct {
	Limit int // at most this many (the engine bounds it to 1,000; 0 or less: none)
	// Path: only publications that changed this file or directory ("" =
	// all). The engine normalises it (NormalizePath) before Entries reads
	// it.
	Path    string
	Since   time.Time // only publications at or after (zero = no bound)
	Until   time.Time // only publications at or before (zero = no bound)
	Content bool      // load both versions of each file (for a patch)
	// Author: only publications whose recorded author it matches (nil =
	// all). A publication of unknown author (formats before v4, or a
	// writer that claimed none) never matches: there is nothing to match.
	Author *regexp.Regexp
}

// Entries returns the retained publications q selects above generation
// after (a watch's last; 0 for all), newest first: what each changed
// (diffstat, and both versions with q.Content). It reads only the
// publications it returns (and, with a path or time filter, the commits
// it passes over).
func (h *View) Entries(q Query, after uint64) ([]Entry, error) {
	out := []Entry{}
	if h.ret.Oldest == 0 {
		return out, nil
	}
	filter := q.Path
	oldest := max(h.ret.Oldest, after+1)
	const window = 128
	for to := h.Current(); to >= oldest && len(out) < q.Limit; {
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
					return nil, fail("read commit", err)
				}
				if (!q.Since.IsZero() && c.Time.Before(q.Since)) || (!q.Until.IsZero() && c.Time.After(q.Until)) {
					continue
				}
			}
			en, err := h.entry(p, filter, q.Content)
			if err != nil {
				return nil, fail("read publication", err)
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
}

// Show returns publication gen with both versions of every file it
// changed under filter. A generation that is retained but published
// nothing (a checkpoint swap took it) yields an entry without time,
// message or files.
func (h *View) Show(gen uint64, filter string) (*Entry, error) {
	p, ok, err := h.PublicationAt(gen)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &Entry{Generation: gen, Files: []Change{}}, nil
	}
	en, err := h.entry(p, filter, true)
	if err != nil {
		return nil, fail("read publication", err)
	}
	return &en, nil
}

// FileAt returns the content of the file p (normalised, not "") at
// generation gen. A path that is no file there is an *ArgumentError.
func (h *View) FileAt(gen uint64, p string) ([]byte, error) {
	g, head, err := h.HeadAt(gen)
	if err != nil {
		return nil, err
	}
	files, err := h.Files(head)
	if err != nil {
		return nil, fail("read tree", err)
	}
	id, ok := files[p]
	if !ok {
		return nil, argument("There is no file %q at generation %d.", p, g)
	}
	c, err := cas.ReadFile(h.src, id)
	if err != nil {
		return nil, fail("read file", err)
	}
	return c, nil
}

// Diff compares the trees at generations from and to (Latest: the
// accepted head) under filter, with both versions of each changed file.
func (h *View) Diff(from, to uint64, filter string) ([]Change, error) {
	_, a, err := h.HeadAt(from)
	if err != nil {
		return nil, err
	}
	_, b, err := h.HeadAt(to)
	if err != nil {
		return nil, err
	}
	out, err := h.changes(a, b, filter, true)
	if err != nil {
		return nil, fail("diff", err)
	}
	return out, nil
}
