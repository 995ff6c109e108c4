package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Clock is the only source of time: the package never reads the wall
// clock or sleeps on its own, so a test drives it with a model clock.
type Clock interface {
	Now() time.Time
	// Wait returns after d, or with ctx's error once ctx is done.
	Wait(ctx context.Context, d time.Duration) error
}

// State is one read of `current`: its manifest (nil: the empty notebook)
// and the ETag a conditional write on it names.
//
// A `current` of version 1, 2 or 3 (a store not yet upgraded) is read as
// the base of the first version-4 write (remote.UpgradeToV4): Manifest
// has its generation, head, checkpoints and segments, no tail, an empty
// `recent` and `upgraded` the next generation, and Old is the decoded
// `current` itself (its history names increment packs). The fold's write
// on such a state is the upgrade, conditional on its ETag like any write.
type State struct {
	Manifest *remote.ManifestV4
	ETag     string
	Old      *remote.Manifest // the version 1–3 `current` read; nil when it is version 4
}

// Generation is the state's generation (0: empty).
func (s State) Generation() uint64 {
	if s.Manifest == nil {
		return 0
	}
	return s.Manifest.Generation
}

// Head is the state's head (zero: empty).
func (s State) Head() cas.ID {
	if s.Manifest == nil {
		return cas.ID{}
	}
	return s.Manifest.Head
}

// Change is what Build made: a head commit built on the state's head
// (its parent is that head, its publication the call's ID, its message
// and time in the commit), the pack of the objects it needs that the
// state's head does not reach, and who wrote it.
type Change struct {
	Head   cas.ID
	Pack   []byte
	Author string
}

// Build builds the call's change on st's head. It is called once per
// version the call registers (a rebuild after a decline or the window).
type Build func(ctx context.Context, st State) (Change, error)

// Objects returns a source of the objects a folder needs besides the
// proposals it reads: the closure of st's head and of the heads of the
// generations since st.Generation()-K (the engine's cache after catching
// up; the proposals' own packs are read by the fold).
type Objects func(ctx context.Context, st State) (cas.Source, error)

// Options configures a Publisher. Zero values take the defaults of
// docs/publication.md §5.7.
type Options struct {
	Store   string // the store ID, named in every `current` written
	Clock   Clock
	Objects Objects
	K, M    int
	// CondEstimate is the writer's estimate of one conditional write of
	// `current`, RTT of one round trip: waiting is timed from them.
	CondEstimate, RTT time.Duration
	// Estimates, when set, replaces them after every read of `current`
	// (an engine learning them from the requests of this very call, so
	// that a writer new to a store does not wait by the defaults); a
	// zero value keeps the estimate before it.
	Estimates func() (cond, rtt time.Duration)
	// Gather: how long after the write it builds on landed a folder
	// LISTs (§5.5); default 5 RTT and one poll (see poll).
	Gather time.Duration
	Stall  float64 // estimates before a takeover (plus 1 s); default 4
	// Parallel bounds concurrent GETs of others' proposals and the
	// fold's concurrent uploads (default 32: a fold at 1 s per key reads
	// 50–90 proposals, and 8 at a time took a quarter of a second; the
	// exhaustive test sets 1 so their order is the schedule's).
	Parallel int
	// Jitter returns a number in [0, 1) for the back-off after a 429
	// (default math/rand; a test supplies its own).
	Jitter func() float64
	// Trace, when set, receives one line per decision (tests).
	Trace func(string)

	gatherAuto         bool // Gather follows the estimates
	mutateIgnoreRecent bool // tests: a fold that ignores `recent`
	mutateReportLast   bool // tests: a folder reports its group's last generation
}

// Defaults of docs/publication.md §5.7.
const (
	DefaultK = 128
	DefaultM = 128
)

func (o *Options) fill() {
	if o.K <= 0 {
		o.K = DefaultK
	}
	if o.M <= 0 {
		o.M = DefaultM
	}
	if o.CondEstimate <= 0 {
		o.CondEstimate = 200 * time.Millisecond
	}
	if o.RTT <= 0 {
		o.RTT = 20 * time.Millisecond
	}
	if o.Gather <= 0 || o.gatherAuto {
		o.Gather, o.gatherAuto = 5*o.RTT+o.poll(), true
	}
	if o.Stall <= 0 {
		o.Stall = 4
	}
	if o.Parallel <= 0 {
		o.Parallel = 32
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
}

// Publisher publishes commits into one store.
type Publisher struct {
	store remote.Store
	opts  Options
}

// New returns a Publisher. K + M must not exceed remote.RecentWindow:
// exactly-once rests on `recent` covering the window (§5.4).
func New(store remote.Store, opts Options) (*Publisher, error) {
	opts.fill()
	switch {
	case opts.K+opts.M > remote.RecentWindow:
		return nil, fmt.Errorf("publish: K + M = %d, more than the %d IDs of recent", opts.K+opts.M, remote.RecentWindow)
	case !remote.IsStoreID(opts.Store):
		return nil, fmt.Errorf("publish: %q is not a store ID", opts.Store)
	case opts.Clock == nil || opts.Objects == nil:
		return nil, errors.New("publish: a Clock and Objects are required")
	}
	return &Publisher{store: store, opts: opts}, nil
}

// Result is an accepted commit: the generation that names the call's ID
// (its own, not its group's last), the head of that generation, and the
// state the call learned it from.
type Result struct {
	Generation uint64
	Head       cas.ID
	State      State
	// Streak is what the writer passes to its next CommitAfter: set when
	// the call's own write accepted a group of it alone (the zero Streak
	// otherwise).
	Streak Streak
}

// Streak is what a writer keeps between its commits for the LIST-skip
// rule (docs/publication.md §8): a writer whose previous commit was
// accepted by its own write of a group of one (nobody else pending at its
// LIST), and whose read of `current` shows that write as the newest,
// registers and folds its version alone without a LIST. Its write is
// conditional like every other: if someone registered meanwhile the worst
// case is that write lost, after which the call takes the whole path. So
// a writer alone makes three requests and a LIST once in MaxSkips + 1
// commits. A count, not a clock: the rule fires for at most MaxSkips
// consecutive commits, so a folder that LISTed and waits on a writer
// committing back to back is folded within MaxSkips + 1 of its commits.
type Streak struct {
	Generation uint64 // the generation of the writer's previous commit (0: none to build on)
	Skipped    int    // consecutive commits, ending with that one, that skipped the LIST
}

// MaxSkips is the longest run of commits of one writer that skip the LIST.
const MaxSkips = 7

// call is one Commit: its ID for its whole life, its newest version.
type call struct {
	p      *Publisher
	o      Options // the Publisher's, with the estimates of this call
	id     string
	build  Build
	c      State // the `current` last read
	ver    uint64
	first  uint64 // G of the first version: any acceptance lies above it
	have   bool   // a version is registered
	ahead  []key  // pending versions before ours at our last LIST
	listed []key  // every pending version at our last LIST, in fold order
	listAt time.Time
	marks  map[key]key
	regs   []string // registered descriptors at our last LIST (keys)
	// props: the proposal versions read (ours from its registration),
	// kept while they are pending: immutable, so a fold never reads one
	// twice, and a waiter that folds next reads them while the write
	// ahead is in flight.
	props    map[key]proposal
	moved    time.Time // when we last saw `current` move
	gen      uint64    // the generation seen then
	gathered bool
	rounds   int // LISTs after the gather's (at most maxRounds)
	lastLen  int // pending versions at the LIST before
	// prev: the writer's previous Streak (CommitAfter); skipped: this
	// call has folded once without a LIST (at most once: after a lost
	// write it takes the whole path).
	prev    Streak
	skipped bool
	didList bool // this call has LISTed
	// checked: no generation up to it names our ID (read from the
	// history once `recent` no longer covered it).
	checked uint64
	// acc: the fold of the versions accKeys (in fold order) on the state
	// acc.c, begun while the folder gathers and extended after each LIST
	// (fold.go, folding); nil when none is under way.
	acc     *folding
	accKeys []key
}

// key is a proposal version.
type key struct {
	g  uint64
	id string
}

func (k key) less(o key) bool { return k.g < o.g || k.g == o.g && k.id < o.id }

// Commit publishes one change under publication ID id (a UUIDv7 the
// caller made; the same ID for every version of this call) and returns
// the generation that accepted it. See the package comment for the path.
func (p *Publisher) Commit(ctx context.Context, id string, build Build) (Result, error) {
	return p.CommitAfter(ctx, id, Streak{}, build)
}

// CommitAfter is Commit for a writer whose previous commit returned
// prev (its Result.Streak; the zero Streak after a crash or an error):
// when the LIST-skip rule allows (see Streak), the call folds its version
// alone without LISTing. Everything else is Commit's.
func (p *Publisher) CommitAfter(ctx context.Context, id string, prev Streak, build Build) (Result, error) {
	if !remote.IsPublicationID(id) {
		return Result{}, fmt.Errorf("publish: %q is not a publication ID", id)
	}
	w := &call{p: p, o: p.opts, id: id, build: build, prev: prev}
	if err := w.read(ctx); err != nil {
		return Result{}, err
	}
	return w.run(ctx)
}

// Resume continues a call whose earlier process registered versions of
// id, the first built on generation first (the engine's pending record
// after a crash, or a retry): it reads `current` and looks for id in
// `recent` and, past it, the history since first, before building
// anything; if the call was not accepted it goes on as Commit does, its
// newest version still foldable or rebuilt. Nothing is registered again
// for an ID already accepted, so an adopted call cannot be accepted twice
// however long it was gone.
func (p *Publisher) Resume(ctx context.Context, id string, first uint64, build Build) (Result, error) {
	if !remote.IsPublicationID(id) {
		return Result{}, fmt.Errorf("publish: %q is not a publication ID", id)
	}
	w := &call{p: p, o: p.opts, id: id, build: build, have: true, first: first, ver: first}
	if err := w.read(ctx); err != nil {
		return Result{}, err
	}
	return w.run(ctx)
}

func (w *call) tracef(format string, a ...any) {
	if w.o.Trace != nil {
		w.o.Trace(fmt.Sprintf("%s: ", w.id[len(w.id)-4:]) + fmt.Sprintf(format, a...))
	}
}

// read is GET current.
func (w *call) read(ctx context.Context) error {
	data, etag, err := w.p.store.Get(ctx, remote.CurrentKey)
	var st State
	switch {
	case errors.Is(err, remote.ErrNotFound):
	case err != nil:
		return fmt.Errorf("publish: read current: %w", err)
	case etag != "" && etag == w.c.ETag && w.c.Manifest != nil && w.c.Old == nil:
		// Unmoved: the bytes of the state we hold (one ETag, one
		// content; the conditional write rests on that too). A waiter
		// polling a late write decoded the same 16 KiB every poll.
		st = w.c
	default:
		m, old, err := remote.DecodeCurrent(data)
		if err != nil {
			return fmt.Errorf("publish: read current: %w", err)
		}
		if old != nil {
			// Versions 1–3: our write will be the upgrade (a version-3
			// writer that writes first moves `current`, and we read again).
			if m, err = remote.UpgradeToV4(old, w.o.Store); err != nil {
				return fmt.Errorf("publish: upgrade current: %w", err)
			}
		} else if m.Store != w.o.Store {
			return fmt.Errorf("publish: current names another store: %w", remote.ErrCorruptManifest)
		}
		st = State{Manifest: m, ETag: etag, Old: old}
	}
	if st.Generation() < w.c.Generation() {
		return fmt.Errorf("publish: current went from generation %d to %d: %w", w.c.Generation(), st.Generation(), remote.ErrGenerationRegressed)
	}
	if w.moved.IsZero() || st.Generation() > w.gen {
		w.moved, w.gen = w.o.Clock.Now(), st.Generation()
	}
	w.c = st
	w.estimate()
	return nil
}

// estimate takes the engine's newest estimates (Options.Estimates): after
// each read of `current` and each LIST, before anything is timed.
func (w *call) estimate() {
	if w.o.Estimates != nil {
		cond, rtt := w.o.Estimates()
		w.o.CondEstimate, w.o.RTT = cmp.Or(cond, w.o.CondEstimate), cmp.Or(rtt, w.o.RTT)
		w.o.fill() // Gather, unless configured
	}
}

// run is the loop every path comes back to: decide on the `current` last
// read (§5.1): accepted, register, LIST and fold, or wait.
func (w *call) run(ctx context.Context) (Result, error) {
	folded := false
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if w.have {
			if g, err := w.acceptance(ctx); err != nil || g > 0 {
				if err != nil {
					return Result{}, err
				}
				return w.accepted(ctx, g)
			}
		}
		var err error
		switch {
		case !w.have || w.dead():
			err = w.register(ctx)
			switch {
			case err != nil:
			case w.maySkip():
				w.skipped = true
				w.tracef("alone: folding without a LIST")
				err = w.fold(ctx, []key{{w.ver, w.id}})
			default:
				err = w.list(ctx, false)
			}
		case folded || w.believesFirst():
			// A folder whose write lost gathered for this fold already:
			// it LISTs and folds at once. Gathering again after each
			// loss, it lost to every commit of a writer folding alone
			// without a LIST (the skip rule) until the streak ran out.
			w.gathered = folded && w.gathered
			err = w.list(ctx, false)
		default:
			err = w.wait(ctx)
		}
		var done *accepted
		switch {
		case errors.As(err, &done):
			return done.r, nil
		case errors.Is(err, errFolded):
			folded = true
		case err != nil:
			return Result{}, err
		default:
			folded = false
		}
	}
}

// accepted is how a step ends the call.
type accepted struct{ r Result }

func (a *accepted) Error() string { return "accepted" }

// errFolded: our fold's write did not win (or its reply was lost); the
// state is read again and the next step LISTs.
var errFolded = errors.New("publish: fold not accepted")

// acceptance returns the generation that names our ID in the state last
// read, or 0. Any version's acceptance lies above w.first; `recent`
// covers the newest generations, and the generations between w.first and
// those are read from the history (the segments), once.
func (w *call) acceptance(ctx context.Context) (uint64, error) {
	m := w.c.Manifest
	if g := m.AcceptedAt(w.id); g > 0 {
		return g, nil
	}
	if m == nil {
		return 0, nil
	}
	from, to := max(w.first+1, m.Upgraded, w.checked+1), m.RecentFirst()-1
	if from > to {
		return 0, nil
	}
	inc, err := w.inSegments(ctx, m.Segments, from, to, w.id)
	if err != nil || inc.Generation > 0 {
		return inc.Generation, err
	}
	w.checked = to
	return 0, nil
}

// inSegments returns the first increment of a generation in [from, to]
// of publication id (any: ""), in the segments segs and the segments
// they index (zero: none).
func (w *call) inSegments(ctx context.Context, segs []remote.SegmentRef, from, to uint64, id string) (remote.IncrementV4, error) {
	for _, s := range segs {
		if s.Last < from || s.First > to {
			continue
		}
		data, _, err := w.p.store.Get(ctx, s.Key())
		if err != nil {
			return remote.IncrementV4{}, fmt.Errorf("publish: read the history: %w", err)
		}
		seg, err := remote.DecodeSegmentV4(s, data)
		if err != nil {
			return remote.IncrementV4{}, err
		}
		for _, inc := range seg.Increments {
			if inc.Generation >= from && inc.Generation <= to && (id == "" || inc.Publication == id) {
				return inc, nil
			}
		}
		if inc, err := w.inSegments(ctx, seg.Segments, from, to, id); err != nil || inc.Generation > 0 {
			return inc, err
		}
	}
	return remote.IncrementV4{}, nil
}

// accepted ends the call at generation g: its head, from the tail or a
// segment.
func (w *call) accepted(ctx context.Context, g uint64) (Result, error) {
	head, err := w.headAt(ctx, g)
	if err != nil {
		return Result{}, err
	}
	w.tracef("accepted at %d", g)
	return Result{Generation: g, Head: head, State: w.c}, nil
}

// headAt returns the head of generation g of the state last read: from
// the tail; below it, by the parents of the tail's oldest head (invariant
// 4) in the objects caught up to the state, which the writer's next build
// reads anyway (a segment GET less on a member's way back); else from the
// segments.
func (w *call) headAt(ctx context.Context, g uint64) (cas.ID, error) {
	m := w.c.Manifest
	if inc, ok := m.Increment(g); ok {
		return inc.Head, nil
	}
	if t := m.Increments; len(t) > 0 && g >= m.Upgraded && g < t[0].Generation &&
		t[0].Generation-g <= uint64(w.p.opts.M) {
		src, err := w.p.opts.Objects(ctx, w.c)
		h := t[0].Head
		for at := t[0].Generation; at > g && err == nil; at-- {
			var c cas.Commit
			c, err = cas.ReadCommit(src, h)
			h = c.Parent
		}
		if err == nil {
			return h, nil
		}
	}
	inc, err := w.inSegments(ctx, m.Segments, g, g, "")
	if err == nil && inc.Generation != g {
		err = fmt.Errorf("publish: generation %d is in no segment: %w", g, remote.ErrCorruptManifest)
	}
	return inc.Head, err
}

// dead: our newest version can no longer be folded (declined, or K
// generations behind): build a new one on the state last read.
func (w *call) dead() bool {
	return w.c.Manifest.IsDeclined(w.ver, w.id) || w.c.Generation()-w.ver >= uint64(w.o.K)
}

// register builds our change on the state last read and PUTs it as a new
// version of our ID (§5.1 step 2).
func (w *call) register(ctx context.Context) error {
	st := w.c
	ch, err := w.build(ctx, st)
	if err != nil {
		return err
	}
	d := remote.ProposalV4{Publication: w.id, Parent: st.Generation(), ParentHead: st.Head(), Head: ch.Head,
		Time: uint64(w.o.Clock.Now().UnixMilli()), Author: ch.Author}
	data, err := remote.EncodeProposalV4(d, ch.Pack)
	if err != nil {
		return err
	}
	k := d.Key()
	if err := w.putImmutable(ctx, k, data); err != nil {
		return err
	}
	if !w.have {
		w.first = d.Parent
	}
	w.have, w.ver = true, d.Parent
	w.keep(key{d.Parent, w.id}, k, data)
	w.tracef("registered on %d", d.Parent)
	return nil
}

// listing is one LIST of proposals/: the versions, the fold markers and
// the registered descriptors.
type listing struct {
	versions []key
	marks    map[key]key // a fold's version -> the last version it took
	regs     []string
}

// listAll LISTs the proposals and markers of the window only: versions
// built on C − K or earlier can never be folded on C or a later state
// (pending), and accepted proposals stay in the store with their
// generations' objects, so a listing from the start would grow with the
// history (on S3, a request more per thousand generations). Every key
// of generation C − K sorts before "proposals/<C − K>-~".
func (w *call) listAll(ctx context.Context) (listing, error) {
	after := ""
	if c, k := w.c.Generation(), uint64(w.o.K); c >= k {
		after = remote.ProposalKey(c-k, "~")
	}
	objs, err := remote.ListAfter(ctx, w.p.store, remote.ProposalsPrefix, after)
	if err != nil {
		return listing{}, fmt.Errorf("publish: list proposals: %w", err)
	}
	l := listing{marks: map[key]key{}}
	for _, o := range objs {
		switch kind, g, id, cg, cid := remote.ParseProposalEntry(o.Key); kind {
		case remote.EntryProposal:
			l.versions = append(l.versions, key{g, id})
		case remote.EntryMarker:
			l.marks[key{g, id}] = key{cg, cid}
		case remote.EntryRollup, remote.EntryCheckpoint:
			l.regs = append(l.regs, o.Key)
		}
	}
	return l, nil
}

// pending is the fold order on c: listed versions not accepted, not
// declined, built less than K generations before c, the newest version
// per ID, sorted by (G, ID).
func (w *call) pending(l listing) []key {
	m, c := w.c.Manifest, w.c.Generation()
	newest := map[string]uint64{}
	for _, k := range l.versions {
		if g, ok := newest[k.id]; !ok || k.g > g {
			newest[k.id] = k.g
		}
	}
	var out []key
	for _, k := range l.versions {
		switch {
		case newest[k.id] != k.g || k.g > c || c-k.g >= uint64(w.o.K):
		case m.IsDeclined(k.g, k.id):
		case !w.o.mutateIgnoreRecent && m.AcceptedAt(k.id) > 0:
		default:
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b key) int { return cmp.Or(cmp.Compare(a.g, b.g), strings.Compare(a.id, b.id)) })
	return out
}

// list LISTs and decides (§5.1 steps 3–4): the first pending version
// folds, the others wait. forced: fold whatever the order says (the
// designated folder has stalled).
func (w *call) list(ctx context.Context, forced bool) error {
	l, err := w.listAll(ctx)
	if err != nil {
		return err
	}
	before := w.marks
	w.marks, w.regs, w.listAt, w.didList = l.marks, l.regs, w.o.Clock.Now(), true
	w.estimate()
	p := w.pending(l)
	w.listed = p
	for k := range w.props {
		if !slices.Contains(p, k) {
			delete(w.props, k) // accepted, declined or superseded: never folded again
		}
	}
	mine := slices.IndexFunc(p, func(k key) bool { return k.id == w.id })
	w.tracef("listed %d pending, ours at %d", len(p), mine)
	switch {
	case mine < 0 && !slices.ContainsFunc(l.versions, func(k key) bool { return k.id == w.id }):
		// No version of ours in the window at all: a call resumed whose
		// earlier process died before its registration landed (its
		// pending record comes first). Unless the state we read accepts
		// it (from a version older than the window; the run's next turn
		// then ends the call), it has nothing to wait for: register a
		// version now, as a new call would.
		if err := w.read(ctx); err != nil {
			return err
		}
		g, err := w.acceptance(ctx)
		w.have = g > 0
		return err
	case mine < 0:
		// Not pending: accepted or declined since our read, or a version
		// on a generation newer than the state we read. Read again.
		return w.read(ctx)
	case forced && mine > 0 && newFold(before, l.marks, p):
		// A fold of a pending version started since our last LIST (the
		// folder, late, or another waiter taking over): it writes on the
		// state we would, so ours could only lose to it or make it lose.
		// Wait for it as for the folder, a whole Stall again. Each
		// deferral needs a marker never seen, one per fold attempt, so
		// waiters take over one after another, never as a herd.
		w.tracef("takeover deferred to a fold in progress")
		w.ahead, w.moved = p[:mine], w.o.Clock.Now()
		return nil
	case forced:
		return w.fold(ctx, p)
	case mine == 0:
		if d := w.landed().Add(w.o.Gather).Sub(w.o.Clock.Now()); d > 0 && !w.gathered {
			// The commits that started when the write we read was seen
			// are still registering: LIST again once they are in (§5.5),
			// reading meanwhile the proposals already listed.
			w.gathered, w.rounds, w.lastLen = true, 0, len(p)
			w.tracef("gather: folding the %d listed", len(p))
			if err := w.extend(ctx, p); err != nil {
				return err
			}
			d = w.landed().Add(w.o.Gather).Sub(w.o.Clock.Now())
			if err := w.o.Clock.Wait(ctx, max(d, 0)); err != nil {
				return err
			}
			return w.list(ctx, false)
		}
		if w.gathered && w.rounds < maxRounds && len(p)-w.lastLen >= max(4, len(p)/8) {
			// Commits are still arriving: the members of the write we
			// read learn it together and register their next commits
			// a few round trips later, some after the gather. LIST
			// again while a LIST finds at least four versions new (and
			// an eighth of the group): a count, so a trickle of commits
			// does not hold the fold.
			w.rounds++
			w.lastLen = len(p)
			if err := w.extend(ctx, p); err != nil {
				return err
			}
			return w.list(ctx, false)
		}
		return w.fold(ctx, p)
	}
	w.ahead = p[:mine]
	return w.wait(ctx)
}

// maySkip is the LIST-skip rule (see Streak): the first version of a
// call whose writer's previous commit was accepted alone by its own
// write, which the state read shows as the newest, within MaxSkips.
func (w *call) maySkip() bool {
	return !w.skipped && w.prev.Generation > 0 && w.prev.Skipped < MaxSkips &&
		w.c.Manifest != nil && w.c.Generation() == w.prev.Generation && w.ver == w.c.Generation()
}

// newFold reports whether now holds a marker that before did not, of a
// version still pending.
func newFold(before, now map[key]key, p []key) bool {
	for k := range now {
		if _, seen := before[k]; !seen && slices.Contains(p, k) {
			return true
		}
	}
	return false
}

// believesFirst: every version ahead of ours at our last LIST is now
// accepted, declined or out of the window: we are probably the next
// folder (the LIST confirms it).
func (w *call) believesFirst() bool {
	m, c := w.c.Manifest, w.c.Generation()
	for _, k := range w.ahead {
		if m.AcceptedAt(k.id) == 0 && !m.IsDeclined(k.g, k.id) && c-k.g < uint64(w.o.K) {
			return false
		}
	}
	return true
}

// landed estimates when the write of the state last read reached the
// store: its folder's clock, one estimate and a round trip later.
func (w *call) landed() time.Time {
	if w.c.Manifest == nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(w.c.Manifest.Time)).Add(w.o.CondEstimate + w.o.RTT)
}

// cycle estimates one fold, from the write before it landing to its own
// landing: the folder learning of it (a poll), the gather, LISTs, the
// GETs of what the last LIST added, the uploads and the write's own legs
// (five round trips), the write. (The model's cycle has four round trips
// and no poll; at 200 ms per key its waiters then read about 100 ms early
// and polled twice.)
func (w *call) cycle() time.Duration {
	o := w.o
	return o.Gather + o.poll() + 5*o.RTT + o.CondEstimate
}

// wait reads `current` when the write that can tell us something should
// have landed, then every poll until it moves, backing off unless it
// folds next, and takes over after Stall (§5.3). A waiter that folds
// next reads the proposals it will fold while it waits. Timing decides
// how many reads a waiter makes, never what is accepted.
func (w *call) wait(ctx context.Context) error {
	o := w.o
	at, next, rank := w.expect()
	if next {
		if err := w.prefetch(ctx, w.afterCut()); err != nil {
			return err
		}
	}
	d := at.Sub(o.Clock.Now())
	w.tracef("wait %v (next %v, rank %d)", d.Round(time.Millisecond), next, rank)
	seen := w.c.Generation()
	for reads := 0; ; reads++ {
		if err := o.Clock.Wait(ctx, max(d, 0)); err != nil {
			return err
		}
		if err := w.read(ctx); err != nil {
			return err
		}
		o = w.o // the estimates as of this read
		if w.c.Generation() > seen {
			w.tracef("current moved to %d", w.c.Generation())
			return nil
		}
		w.tracef("current unmoved (read %d)", reads)
		stall := time.Duration(o.Stall*float64(o.CondEstimate)) + time.Second + time.Duration(rank)*(o.CondEstimate+4*o.RTT)
		if o.Clock.Now().Sub(w.moved) > stall {
			w.tracef("takeover after %v", o.Clock.Now().Sub(w.moved))
			return w.list(ctx, true)
		}
		// The write is late. The next folder keeps reading every poll
		// (it starts the next cycle); the others read less and less
		// often (two polls, then doubling, at most a quarter of an
		// estimate): under load a cycle can run a second past its
		// estimate, and a hundred waiters polling every poll made the
		// load worse.
		d = o.poll()
		if !next && reads >= 2 {
			d = min(o.poll()<<min(reads-1, 4), max(o.poll(), o.CondEstimate/4))
		}
	}
}

// poll is the interval of a waiter's reads of `current` once the write
// it waits for is late: a sixteenth of an estimate, at least two round
// trips. A waiter learns its acceptance up to one poll late and its
// agent's next commit registers a few round trips after, so the gather
// includes one poll: with round trips alone, at 1 s per key those
// commits missed the next fold's LIST and waited a whole cycle more.
func (o *Options) poll() time.Duration { return max(2*o.RTT, o.CondEstimate/16) }

// expect estimates when the write that can tell us something lands, from
// our last LIST: the fold of the first version ahead of ours (the
// folder). If the folder's marker was listed, that fold listed before we
// did and lands one cycle after the write we read (no earlier than a
// round trip from now); if not, it had not listed at our LIST (which may
// be older than the state we read) and will take ours. Past the marker's
// cut, its write tells only the first waiter past the cut something (it
// folds next: next); the others read once the write after it should
// land. rank counts the unaccepted versions ahead of ours after the
// folder's, for the takeover's stretch.
func (w *call) expect() (at time.Time, next bool, rank int) {
	o := w.o
	now := o.Clock.Now()
	var folder *key
	var unaccepted []key
	for i, k := range w.ahead {
		if w.c.Manifest.AcceptedAt(k.id) == 0 {
			if folder == nil {
				folder = &w.ahead[i]
			} else {
				rank++
			}
			unaccepted = append(unaccepted, k)
		}
	}
	at = w.landed().Add(w.cycle())
	cut, marked := key{}, false
	if folder != nil {
		cut, marked = w.marks[*folder]
	}
	if !marked {
		at = later(at, w.listAt.Add(w.cycle()-o.Gather))
	}
	if at = later(at, now.Add(o.RTT)); at.After(now.Add(w.cycle())) {
		at = now.Add(w.cycle())
	}
	if !marked || !cut.less(key{w.ver, w.id}) {
		return at, false, rank
	}
	for _, k := range unaccepted {
		if cut.less(k) {
			return at.Add(w.cycle()), false, rank // another waiter folds next
		}
	}
	return at, true, rank
}

// afterCut is the pending versions of our last LIST past the cut of the
// folder's marker: what we fold next, if nothing else registers.
func (w *call) afterCut() []key {
	var folder key
	for _, k := range w.ahead {
		if w.c.Manifest.AcceptedAt(k.id) == 0 {
			folder = k
			break
		}
	}
	cut := w.marks[folder]
	i := slices.IndexFunc(w.listed, func(k key) bool { return cut.less(k) })
	if i < 0 {
		return nil
	}
	return w.listed[i:]
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// fold is §5.2: take the pending versions (at most M, ours always among
// them), read the others', merge, upload the group pack and segments,
// and write `current` conditionally on the state last read.
func (w *call) fold(ctx context.Context, p []key) error {
	o := w.o
	c := w.c
	p = w.capped(p)
	// The marker only times others' waits: its failure changes nothing
	// but their timing. It goes up as the fold's last LIST is known,
	// beside the rest of the fold, and is in before the write is sent: a
	// waiter that LISTs meanwhile times its read by it. One request at a
	// time (Parallel 1, the exhaustive test) it goes first.
	marked := make(chan struct{})
	go func() {
		defer close(marked)
		if cut := p[len(p)-1]; len(p) > 1 {
			_ = w.p.store.Put(ctx, remote.FoldMarkerKey(w.ver, w.id, cut.g, cut.id), nil)
		}
	}()
	if o.Parallel == 1 {
		<-marked
	}
	defer func() { <-marked }()
	if err := w.extend(ctx, p); err != nil {
		return err
	}
	f, err := w.acc.result()
	if err != nil {
		return err
	}
	if len(f.members) == 0 {
		// Nothing merges, ours included (p always holds it): ours
		// conflicts with C itself. A write that only declines would
		// spend the key for nothing; rebuild ours on C and fold again
		// from a new LIST (§5.2 step 2).
		w.tracef("own version does not merge")
		if err := w.register(ctx); err != nil {
			return err
		}
		return w.list(ctx, false)
	}
	var group remote.GroupRef
	if f.group != nil {
		group = remote.GroupRef{Sum: cas.Sum(f.group), Size: int64(len(f.group))}
	}
	next, segs, err := remote.NextV4(c.Manifest, o.Store, uint64(o.Clock.Now().UnixMilli()), f.members, group, f.declined)
	if err != nil {
		return err
	}
	next.AddRegistered(w.registered(ctx, next), func(g uint64) (cas.ID, bool) {
		h, err := w.headAt(ctx, g) // a checkpoint through a generation below the tail
		return h, err == nil
	})
	// Every object the write names is stored before it is sent
	// (invariant 2); they do not depend on each other, so they go up
	// together, Parallel at a time (the group pack first when one at a
	// time: the exhaustive test's order).
	ups := segs
	if f.group != nil {
		ups = append([]remote.SegmentUpload{{Key: group.Key(), Data: f.group}}, segs...)
	}
	if err := parallel.For(len(ups), o.Parallel, func(i int) error {
		return w.putImmutable(ctx, ups[i].Key, ups[i].Data)
	}); err != nil {
		return err
	}
	<-marked
	// Waiters time their reads from `time` (when the write landed, less
	// one estimate): the instant it is sent, after the uploads.
	next.Time = uint64(o.Clock.Now().UnixMilli())
	data, err := remote.EncodeManifestV4(next)
	if err != nil {
		return err
	}
	if c.Manifest == nil {
		_, err = w.p.store.CreateIfAbsent(ctx, remote.CurrentKey, data)
	} else {
		_, err = w.p.store.ReplaceIfMatch(ctx, remote.CurrentKey, data, c.ETag)
	}
	w.tracef("fold of %d on %d: %d objects up, written: %v", len(f.members), c.Generation(), len(ups), err)
	switch {
	case err == nil:
		for i, m := range f.members {
			if m.Publication == w.id {
				w.c = State{Manifest: next}
				if o.mutateReportLast {
					i = len(f.members) - 1
				}
				r := Result{Generation: c.Generation() + 1 + uint64(i), Head: m.Head, State: w.c}
				if len(p) == 1 && len(f.members) == 1 {
					// Alone: our own write, nobody else pending at our
					// LIST (or no LIST, by the rule).
					r.Streak = Streak{Generation: r.Generation}
					if !w.didList {
						r.Streak.Skipped = w.prev.Skipped + 1
					}
				}
				return &accepted{r}
			}
		}
		// Our version did not merge (onto C, or onto a member before
		// it): the write declined it, and the next read rebuilds it.
		w.tracef("declined ours (at %d in the order), accepted %d others",
			slices.Index(p, key{w.ver, w.id}), len(f.members))
		if err := w.read(ctx); err != nil {
			return err
		}
		return errFolded
	case errors.Is(err, remote.ErrRateLimited):
		// A lost race with back-off: one jittered estimate (§5.6).
		d := time.Duration((0.5 + o.Jitter()) * float64(o.CondEstimate))
		if err := o.Clock.Wait(ctx, d); err != nil {
			return err
		}
		fallthrough
	case errors.Is(err, remote.ErrPrecondition), errors.Is(err, remote.ErrAmbiguous):
		// Lost (another write came first) or unknown: the state read
		// next decides: our ID named, accepted; unchanged, we fold again
		// on the same ETag (at most one of the two writes applies);
		// moved without our ID, that write can never apply.
		if rerr := w.read(ctx); rerr != nil {
			if errors.Is(err, remote.ErrAmbiguous) {
				// The write may have applied and nothing says whether:
				// the caller must learn that the outcome is unknown.
				return fmt.Errorf("publish: %w: the write of current may have applied (%v), and reading current failed: %w", remote.ErrAmbiguous, err, rerr)
			}
			return rerr
		}
		return errFolded
	}
	return fmt.Errorf("publish: write current: %w", err)
}

// capped is the versions p that a fold takes: at most M, ours always
// among them.
func (w *call) capped(p []key) []key {
	m := w.o.M
	if len(p) <= m {
		return p
	}
	if own := slices.IndexFunc(p, func(k key) bool { return k.id == w.id }); own >= m {
		return append(slices.Clip(p[:m-1]), p[own])
	}
	return p[:m]
}

// extend brings the fold under way (w.acc) to the versions p (at most M
// of them, ours among them) on the state last read: when it is on that
// state and its versions are the first of p, only the rest are read and
// folded; otherwise (another state, a version gone or a new one sorting
// before one folded) it begins again. A fold is a left fold, so the
// result is the fold of p at once wherever the pieces fell: timing
// decides how much of the fold is done before the folder's last LIST,
// never what its write accepts.
func (w *call) extend(ctx context.Context, p []key) error {
	p = w.capped(p)
	if w.acc == nil || w.acc.c != w.c || len(w.accKeys) > len(p) || !slices.Equal(w.accKeys, p[:len(w.accKeys)]) {
		objects, err := w.o.Objects(ctx, w.c)
		if err != nil {
			return err
		}
		w.acc, w.accKeys = newFolding(w.c, w.id, objects), nil
	}
	todo := p[len(w.accKeys):]
	if err := w.prefetch(ctx, todo); err != nil {
		return err
	}
	props := make([]proposal, len(todo))
	for i, k := range todo {
		props[i] = w.props[k]
	}
	if err := w.acc.add(props); err != nil {
		w.acc = nil
		return err
	}
	w.accKeys = slices.Clone(p)
	w.tracef("fold of %d on %d: %d folded now", len(p), w.c.Generation(), len(todo))
	return nil
}

// registered reads the registered descriptors of our last LIST that the
// write next could still take (§5.2 step 3), Parallel at a time. One that
// cannot be read or decoded is left out: a registration never fails a
// commit. Under the LIST-skip rule there is no LIST: registrations wait
// for the next fold that lists.
func (w *call) registered(ctx context.Context, next *remote.ManifestV4) []remote.Registered {
	keys := next.WantsRegistered(w.regs)
	got := make([]remote.Registered, len(keys))
	_ = parallel.For(len(keys), w.o.Parallel, func(i int) error {
		if data, _, err := w.p.store.Get(ctx, keys[i]); err == nil {
			got[i], _ = remote.DecodeRegistered(keys[i], data)
		}
		return nil
	})
	return slices.DeleteFunc(got, func(r remote.Registered) bool { return r.Kind == 0 })
}

// prefetch reads the objects of the versions ks not read yet (at most
// M), Parallel at a time. A version whose object is missing or is not a
// version-4 proposal is kept as foreign: the fold declines it.
func (w *call) prefetch(ctx context.Context, ks []key) error {
	var todo []key
	for _, k := range ks {
		if _, ok := w.props[k]; !ok && len(todo) < w.o.M {
			todo = append(todo, k)
		}
	}
	got := make([][]byte, len(todo))
	err := parallel.For(len(todo), w.o.Parallel, func(i int) error {
		data, _, err := w.p.store.Get(ctx, remote.ProposalKey(todo[i].g, todo[i].id))
		if err != nil && !errors.Is(err, remote.ErrNotFound) {
			return fmt.Errorf("publish: read proposal: %w", err)
		}
		got[i] = data
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range todo {
		w.keep(k, remote.ProposalKey(k.g, k.id), got[i])
	}
	return nil
}

// keep decodes the object of version k (nil: absent) into w.props.
func (w *call) keep(k key, name string, data []byte) {
	if w.props == nil {
		w.props = map[key]proposal{}
	}
	d, pack, err := remote.DecodeProposalV4(name, data) // absent (nil): not a proposal either
	if err != nil {
		w.props[k] = proposal{desc: remote.ProposalV4{Publication: k.id, Parent: k.g}, foreign: true}
		return
	}
	pk, err := cas.OpenPack(pack)
	if err != nil {
		w.props[k] = proposal{desc: d, foreign: true}
		return
	}
	w.props[k] = proposal{desc: d, pack: pk}
}

// maxRounds bounds the LISTs a folder makes after its gather while
// commits are still arriving.
const maxRounds = 3

// putImmutable PUTs a content- or ID-keyed object, the same bytes again
// on an ambiguous reply.
func (w *call) putImmutable(ctx context.Context, k string, data []byte) error {
	for {
		err := w.p.store.Put(ctx, k, data)
		if err == nil {
			return nil
		}
		if !errors.Is(err, remote.ErrAmbiguous) {
			return fmt.Errorf("publish: put %s: %w", strings.SplitN(k, "/", 2)[0], err)
		}
	}
}
