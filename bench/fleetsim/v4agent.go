package fleetsim

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	ipar "github.com/slivingdoc/slivingdoc/internal/parallel"
	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
)

// This file is the agent of the publish mode (Config.Engine ==
// EnginePublish): the engine's half of a format-v4 commit, written for
// the simulation, around the real publish.Publisher. The engine is not
// wired to package publish yet; this agent stands in for it so the
// protocol can be judged under the latency model before it is.

// pubClock is the model clock as publish.Clock.
type pubClock struct{ c modelClock }

func (p pubClock) Now() time.Time { return p.c.now() }
func (p pubClock) Wait(ctx context.Context, d time.Duration) error {
	return p.c.sleep(ctx, d)
}

// catchUpStore counts the requests of catch-up on a row of their own:
// every request a v4agent makes outside publish goes through it (and on
// to the latency model, which counts it with the rest).
type catchUpStore struct {
	inner remote.Store
	on    func() bool
	mu    sync.Mutex
	c     Counts
}

func (s *catchUpStore) get(ctx context.Context, key string) ([]byte, error) {
	data, _, err := s.inner.Get(ctx, key)
	if s.on() {
		s.mu.Lock()
		s.c.Requests[KindGet]++
		s.c.BytesDown += int64(len(data))
		if s.c.ByClass == nil {
			s.c.ByClass = map[string]int64{}
		}
		s.c.ByClass["GET "+KeyClass(key)]++
		s.mu.Unlock()
	}
	return data, err
}

// take returns the counts so far and resets them.
func (s *catchUpStore) take() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.c
	s.c = Counts{}
	return c
}

// packCache shares decoded packs between agents: every agent still GETs
// each pack it catches up on through the latency model (the request and
// its bytes are counted and slept as a real agent's), but the bytes are
// the same immutable object, so the process opens each once. Without it
// 100 agents would hold 100 copies of every recent pack; and opening
// one at a time per key matters as much: the members of a group of 90
// learn their acceptance together and all read its group pack, and 90
// openings of it at once (each hashing every object) stalled this
// process for a second of model time on a loaded machine, which the
// simulation would charge to the protocol.
type packCache struct {
	mu    sync.Mutex
	packs map[string]*cas.Pack
	busy  map[string]chan struct{} // keys being opened
}

func (c *packCache) open(key string, data []byte) (*cas.Pack, error) {
	c.mu.Lock()
	for {
		if p := c.packs[key]; p != nil {
			c.mu.Unlock()
			return p, nil
		}
		ch := c.busy[key]
		if ch == nil {
			break
		}
		c.mu.Unlock()
		<-ch // another agent is opening it
		c.mu.Lock()
	}
	if c.busy == nil {
		c.busy = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	c.busy[key] = ch
	c.mu.Unlock()
	p, err := openPack(key, data)
	c.mu.Lock()
	if err == nil {
		c.packs[key] = p
	}
	delete(c.busy, key)
	close(ch)
	c.mu.Unlock()
	return p, err
}

func openPack(key string, data []byte) (*cas.Pack, error) {
	if kind, _, _, _, _ := remote.ParseProposalEntry(key); kind == remote.EntryProposal {
		var err error
		if _, data, err = remote.DecodeProposalV4(key, data); err != nil {
			return nil, err
		}
	}
	p, err := cas.OpenPack(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return p, nil
}

// v4agent is one agent of the publish mode: its file (its directory, in
// memory), its object cache and the generation it has caught up to.
type v4agent struct {
	tag     string
	path    string // its file's path in the notebook
	content []byte
	pub     *publish.Publisher
	store   *catchUpStore
	shared  *packCache
	keep    uint64 // generations of packs the cache keeps
	clock   pubClock
	// lazy: catch up on the newest generation only and fetch older
	// generations' packs when the fold or the build misses an object
	// (Config.CatchUp == CatchUpLazy); ctx and m are the call's.
	lazy  bool
	ctx   context.Context
	m     *remote.ManifestV4
	heads map[cas.ID]remote.IncrementV4 // lazy: the increments seen, by head
	segs  map[string]*remote.SegmentV4  // segments read (nil: not kept)

	known uint64            // the generation caught up to
	packs map[string]uint64 // cached pack key -> the newest generation naming it
	index map[cas.ID]*cas.Pack
	byKey map[string]*cas.Pack
	// published: objects of the agent's own accepted versions (its file's
	// chunks), which every later state's head reaches and a new version's
	// pack therefore leaves out.
	published map[cas.ID]bool
	built     []cas.ID // objects of the newest version built
	// builtKey, builtPack: the newest version's proposal key and pack,
	// which the agent need not fetch back once it is accepted.
	builtKey  string
	builtPack []byte

	seq                        int
	pending, accepted, written []string
	ids                        []reported
	ok, busy, gaveUp, calls    int
	versions                   int // changes built: one per commit, more after a decline
	cause                      map[string]string
	latency, callLatency       []time.Duration
	measured                   []bool // latency[i] is of a commit whose instant is past the warm-up
	okAt                       []time.Duration
	trace                      []string
	traceOn                    func(string) // nil: no trace
	// regAt: when the newest version's registration landed (model time
	// since the run's start; Config.Breakdown); times: each accepted
	// commit's instants.
	regAt, startAt time.Time
	times          []rawTimes
	// reqs: every request of the agent's publisher; lastRead its last
	// GET of `current`, reads those since its newest registration.
	reqMu    sync.Mutex
	noting   bool // Config.Breakdown: catch-up's GETs are noted too
	reqs     []req
	lastRead req
	reads    int
}

// reported is what an agent was told: the generation naming its ID.
type reported struct {
	id  string
	gen uint64
}

// tracef adds a line to the trace of the commit in flight (Config.TraceSlow).
func (a *v4agent) tracef(format string, args ...any) {
	if a.traceOn != nil {
		a.traceOn("agent: " + fmt.Sprintf(format, args...))
	}
}

// Get is the cache as a cas.Source.
func (a *v4agent) Get(id cas.ID) (cas.Object, error) {
	if p := a.index[id]; p != nil {
		return p.Get(id)
	}
	if a.lazy && a.m != nil {
		if p, err := a.lazyFind(id); err != nil || p != nil {
			if err != nil {
				return cas.Object{}, err
			}
			return p.Get(id)
		}
	}
	return cas.Object{}, fmt.Errorf("agent %s: object %s: %w", a.tag, id, cas.ErrNotFound)
}

// lazyFind fetches the packs of the generations of the last K, newest
// first, until one holds id (Config.CatchUp == CatchUpLazy): the tail's,
// then those the segments list. Nil: no such pack.
func (a *v4agent) lazyFind(id cas.ID) (*cas.Pack, error) {
	m := a.m
	try := func(inc remote.IncrementV4) (*cas.Pack, error) {
		keys := []string{inc.ProposalKey()}
		if inc.Group != (remote.GroupRef{}) {
			keys = append(keys, inc.Group.Key())
		}
		for _, k := range keys {
			if _, ok := a.packs[k]; ok {
				continue
			}
			data, err := a.get(a.ctx, k)
			if err != nil {
				return nil, fmt.Errorf("agent %s: fetch %s: %w", a.tag, k, err)
			}
			p, err := a.shared.open(k, data)
			if err != nil {
				return nil, err
			}
			a.add(k, p, inc.Generation)
		}
		return a.index[id], nil
	}
	// A head the fold reads (a proposal's parent) is some generation's
	// head: its commit and tree are in that generation's packs, which
	// are fetched directly instead of every generation after it.
	for _, inc := range m.Increments {
		a.heads[inc.Head] = inc
	}
	if inc, ok := a.heads[id]; ok {
		if p, err := try(inc); err != nil || p != nil {
			return p, err
		}
	}
	from := uint64(1)
	if m.Generation > uint64(publish.DefaultK) {
		from = m.Generation - uint64(publish.DefaultK)
	}
	var older []remote.IncrementV4
	if from < m.Increments[0].Generation {
		incs, err := a.increments(a.ctx, m, from)
		if err != nil {
			return nil, err
		}
		for _, inc := range incs {
			a.heads[inc.Head] = inc
			if inc.Generation < m.Increments[0].Generation {
				older = append(older, inc)
			}
		}
		if inc, ok := a.heads[id]; ok {
			if p, err := try(inc); err != nil || p != nil {
				return p, err
			}
		}
	}
	// Not a head: every generation of the window, newest first.
	for _, incs := range [][]remote.IncrementV4{m.Increments, older} {
		for i := len(incs) - 1; i >= 0; i-- {
			if p, err := try(incs[i]); err != nil || p != nil {
				return p, err
			}
		}
	}
	return nil, nil
}

// add puts a pack in the cache, as of generation g.
func (a *v4agent) add(key string, p *cas.Pack, g uint64) {
	if old, ok := a.packs[key]; ok {
		a.packs[key] = max(old, g)
		return
	}
	a.packs[key] = g
	a.byKey[key] = p
	for _, id := range p.IDs() {
		a.index[id] = p
	}
}

// prune drops the packs no generation in the last keep names. The fold
// reads the trees of the heads of the last K generations and of the
// proposals' parents (as old); blobs only when two changes touch one
// file, which the agents' own files never do. So the cache is bounded
// at the cost of an error (never a wrong tree) if a merge ever needed an
// older blob.
func (a *v4agent) prune(g uint64) {
	if g <= a.keep {
		return
	}
	for key, at := range a.packs {
		if at >= g-a.keep {
			continue
		}
		p := a.byKey[key]
		for _, id := range p.IDs() {
			if a.index[id] == p {
				delete(a.index, id)
			}
		}
		delete(a.packs, key)
		delete(a.byKey, key)
	}
}

// catchUpParallel bounds an agent's concurrent catch-up GETs (publish's
// own default for the proposals a fold reads).
const catchUpParallel = 8

// catchUp fetches what st's manifest names for the generations after
// the one the agent knows: each accepted proposal and each group pack,
// the segments where the generations left the tail. Its requests are
// catch-up's, counted apart from the publication path's.
func (a *v4agent) catchUp(ctx context.Context, st publish.State) error {
	m := st.Manifest
	a.ctx, a.m = ctx, m
	if m == nil || m.Generation <= a.known {
		return nil
	}
	a.tracef("catch up from %d to %d", a.known, m.Generation)
	from := a.known + 1
	if a.lazy {
		from = m.Generation // the rest when an object is missed (lazyFind)
	}
	incs, err := a.increments(ctx, m, from)
	if err != nil {
		return err
	}
	// The packs to fetch, newest generation naming each, in order.
	type want struct {
		key string
		gen uint64
	}
	var wants []want
	at := map[string]int{}
	for _, inc := range incs {
		keys := []string{inc.ProposalKey()}
		if inc.Group != (remote.GroupRef{}) {
			keys = append(keys, inc.Group.Key())
		}
		for _, k := range keys {
			if _, ok := a.packs[k]; ok {
				a.packs[k] = max(a.packs[k], inc.Generation)
				continue
			}
			if i, ok := at[k]; ok {
				wants[i].gen = inc.Generation
				continue
			}
			at[k] = len(wants)
			wants = append(wants, want{k, inc.Generation})
		}
	}
	// Fetched concurrently, as publish reads the proposals it folds: one
	// round trip after another would make catching up on a hundred
	// generations two seconds long.
	got := make([]*cas.Pack, len(wants))
	err = ipar.For(len(wants), catchUpParallel, func(i int) error {
		data, err := a.get(ctx, wants[i].key)
		if err != nil {
			return fmt.Errorf("agent %s: catch up on %s: %w", a.tag, wants[i].key, err)
		}
		got[i], err = a.shared.open(wants[i].key, data)
		return err
	})
	if err != nil {
		return err
	}
	for i, w := range wants {
		a.add(w.key, got[i], w.gen)
	}
	a.tracef("caught up: %d increments, %d packs fetched", len(incs), len(wants))
	a.known = m.Generation
	a.prune(a.known)
	return nil
}

// increments returns the increments of generations from..m.Generation:
// the tail's, and the older ones from the segments that hold them.
func (a *v4agent) increments(ctx context.Context, m *remote.ManifestV4, from uint64) ([]remote.IncrementV4, error) {
	var out []remote.IncrementV4
	tail := m.Increments[0].Generation
	if from < tail {
		var walk func(segs []remote.SegmentRef) error
		walk = func(segs []remote.SegmentRef) error {
			for _, s := range segs {
				if s.Last < from || s.First >= tail {
					continue
				}
				seg := a.segs[s.Key()]
				if seg == nil {
					data, err := a.get(ctx, s.Key())
					if err != nil {
						return fmt.Errorf("agent %s: segment: %w", a.tag, err)
					}
					if seg, err = remote.DecodeSegmentV4(s, data); err != nil {
						return err
					}
					if a.segs != nil {
						a.segs[s.Key()] = seg // immutable: read once
					}
				}
				for _, inc := range seg.Increments {
					if inc.Generation >= from && inc.Generation < tail {
						out = append(out, inc)
					}
				}
				if err := walk(seg.Segments); err != nil {
					return err
				}
			}
			return nil
		}
		if err := walk(m.Segments); err != nil {
			return nil, err
		}
		slices.SortFunc(out, func(x, y remote.IncrementV4) int { return int(x.Generation) - int(y.Generation) })
		if len(out) != int(tail-from) {
			return nil, fmt.Errorf("agent %s: the segments hold %d of generations %d..%d", a.tag, len(out), from, tail-1)
		}
	}
	for _, inc := range m.Increments {
		if inc.Generation >= from {
			out = append(out, inc)
		}
	}
	return out, nil
}

// objects is publish.Options.Objects: the cache, caught up to st.
func (a *v4agent) objects(ctx context.Context, st publish.State) (cas.Source, error) {
	if err := a.catchUp(ctx, st); err != nil {
		return nil, err
	}
	return a, nil
}

// build is the agent's publish.Build: its file as it is now, in a head
// commit on st's head, and the pack of what st's head does not reach
// (the commit, the root tree, the file's new chunks).
func (a *v4agent) build(id, message string) publish.Build {
	return func(ctx context.Context, st publish.State) (publish.Change, error) {
		a.versions++
		if err := a.catchUp(ctx, st); err != nil {
			return publish.Change{}, err
		}
		var base cas.ID
		if !st.Head().IsZero() {
			c, err := cas.ReadCommit(a, st.Head())
			if err != nil {
				return publish.Change{}, err
			}
			base = c.Tree
		}
		sink := cas.NewObjectSet()
		fid, err := cas.WriteFile(sink, a.content)
		if err != nil {
			return publish.Change{}, err
		}
		root, err := cas.UpdateTree(multiSource{sink, a}, sink, base, map[string]cas.ID{a.path: fid})
		if err != nil {
			return publish.Change{}, err
		}
		head := cas.EncodeCommit(cas.Commit{Tree: root, Parent: st.Head(), Publication: id, Time: a.clock.Now(), Message: []byte(message)})
		if err := sink.Put(head); err != nil {
			return publish.Change{}, err
		}
		pack, ids, err := packOf(sink, a.published)
		if err != nil {
			return publish.Change{}, err
		}
		a.built = ids
		a.builtKey, a.builtPack = remote.ProposalKey(st.Generation(), id), pack
		return publish.Change{Head: head.ID, Pack: pack, Author: a.tag}, nil
	}
}

// packOf packs sink's objects but those in skip, in ID order.
func packOf(sink *cas.ObjectSet, skip map[cas.ID]bool) ([]byte, []cas.ID, error) {
	ids := slices.DeleteFunc(sink.IDs(), func(id cas.ID) bool { return skip[id] })
	slices.SortFunc(ids, func(x, y cas.ID) int { return bytes.Compare(x[:], y[:]) })
	pw := cas.NewPackWriter()
	for _, id := range ids {
		o, err := sink.Get(id)
		if err != nil {
			return nil, nil, err
		}
		if err := pw.Put(o); err != nil {
			return nil, nil, err
		}
	}
	pack, err := pw.Finish()
	return pack, ids, err
}

// multiSource reads from each source in turn.
type multiSource []cas.Source

func (m multiSource) Get(id cas.ID) (cas.Object, error) {
	for _, s := range m {
		if o, err := s.Get(id); err == nil {
			return o, nil
		}
	}
	return cas.Object{}, fmt.Errorf("object %s: %w", id, cas.ErrNotFound)
}

// commitOnce publishes the agent's file as it is now: one
// publish.Publisher.Commit under a fresh publication ID, or a Resume of
// the ID a failed call registered (the engine's pending record).
func (a *v4agent) commitOnce(ctx context.Context, id string, first *uint64) (publish.Result, error) {
	b := a.build(id, a.tag+" note")
	track := func(ctx context.Context, st publish.State) (publish.Change, error) {
		if *first == 0 {
			*first = st.Generation() + 1 // Resume's first is a generation; +1 marks "set"
		}
		return b(ctx, st)
	}
	if *first == 0 {
		return a.pub.Commit(ctx, id, track)
	}
	return a.pub.Resume(ctx, id, *first-1, track)
}

// commit calls commitOnce until the change is accepted: a call that
// returns an error (publish gives up only on a store error or a
// cancelled context) is counted as busy and resumed under the same ID,
// up to maxTries calls; none starts after deadline.
func (a *v4agent) commit(ctx context.Context, deadline time.Time, maxTries int) (bool, error) {
	id := remote.NewUUIDv7()
	var first uint64
	for try := 1; ; try++ {
		if time.Now().After(deadline) {
			a.gaveUp++
			return false, nil
		}
		t := time.Now()
		if try == 1 {
			a.startAt = t
		}
		r, err := a.commitOnce(ctx, id, &first)
		a.calls++
		a.callLatency = append(a.callLatency, time.Since(t))
		if err == nil {
			a.ok++
			a.accepted = append(a.accepted, a.pending...)
			a.pending = nil
			a.ids = append(a.ids, reported{id, r.Generation})
			for _, oid := range a.built {
				a.published[oid] = true
			}
			// The accepted version is the newest built (an older one is
			// declined or out of the window): its pack is already here.
			if p, err := cas.OpenPack(a.builtPack); err == nil {
				a.add(a.builtKey, p, r.Generation)
			}
			return true, nil
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		a.busy++
		if _, seen := a.cause["publish error"]; !seen {
			a.cause["publish error"] = err.Error()
		}
		if try >= maxTries {
			a.gaveUp++
			return false, nil
		}
	}
}
