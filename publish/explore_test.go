package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// The exhaustive small-scope test of docs/publication.md §7: 2–3 writers
// run this package's real Commit (real merges, real cas objects, real
// codecs) as goroutines over the in-memory store, and a deterministic
// scheduler admits one store request at a time. A writer runs until it
// blocks on a request or ends; only when every writer is blocked or done
// does the scheduler choose (crashpoint.Choose) which pending request the
// store applies next, and whether a fault hits it: the writer dies
// before the request applies, or after it applied but before the reply,
// or (a conditional write) the reply is lost, applied or not, or the
// store refuses it as rate limited (429, not applied). So the
// outcome depends only on the choice sequence, which Replay runs again.
//
// Requests whose result no schedule can change apply at once, without a
// choice: GETs of proposals, segments and group packs (immutable objects
// that exist before anyone can name them), and PUTs of fold markers,
// group packs and segments (objects no other writer's decision reads;
// markers only time waits). A death around them is a death before the
// writer's next request. Waits end at once: a wait touches no shared
// state. The model clock advances one tick per request and per wait, so
// takeover timeouts fire after a few steps of others' work and forced
// folds race designated ones.
//
// After every schedule the audit checks the invariants of §6 on the
// store, the sequence of `current` written, and what every call
// reported.

// scope bounds one exploration.
type scope struct {
	writers, commits int
	depth            int  // scheduled requests per schedule at most; longer ones are cut
	faults           int  // faults per schedule at most
	conflict         bool // every commit also rewrites line 1 of shared.md: concurrent ones conflict
	mutate           bool // Options.mutateIgnoreRecent
	v3               bool // the store starts as version 3 (generation 1): the first write upgrades it
	v3writer         bool // v3 scope: a version-3 writer races the upgrade with one commit
	mutateLast       bool // Options.mutateReportLast
	chain            bool // each writer's commits go through CommitAfter with the previous one's Streak (the LIST-skip rule)
	// resume: a call killed after its first build (the engine's pending
	// record) is resumed once by a new process, Resume with its ID and the
	// generation of that build, as the engine's next commit does.
	resume bool
	// builder: a third agent, a checkpoint builder, stores the
	// checkpoint of generation 1 (the seed) and registers its descriptor
	// (a scheduled PUT), after registering at once a rollup descriptor
	// of a block that has not ended (no fold may copy it).
	builder bool
	// gather: a Gather of four ticks, so that a folder that LISTs soon
	// after the write it read gathers (its model-clock wait is one tick):
	// it folds what it listed, LISTs again and folds only what that LIST
	// added, or begins again (§5.5).
	gather bool
	// bystander: in the conflict scope, the last writer's commits leave
	// shared.md alone, so they merge where the others' conflict: a
	// folder whose own version does not merge onto C still has one to
	// accept.
	bystander bool
}

const tick = 250 * time.Millisecond

var errKilled = errors.New("killed by the schedule")

// pendingOp is one scheduled request, waiting for the scheduler.
type pendingOp struct {
	w     *writer
	label string
	cond  bool
	apply func() error
	reply chan error
}

// world is one schedule's store, clock and writers.
type world struct {
	sc      scope
	mem     *memstore.Mem
	choose  crashpoint.Choose
	ticks   int
	ops     []*pendingOp
	parked  chan struct{} // a writer blocked on a request or ended
	trace   []string
	faults  int
	steps   int
	packs   map[string]*cas.Pack // immutable objects opened, by key
	writes  [][]byte             // every `current` written, in order
	calls   map[string]*callLog  // by publication ID
	order   []string             // IDs in the order calls started
	writers []*writer
	v3packs []string // v3 scope: the increment packs of the version-3 generations, oldest first
	v3gen   uint64   // the generation the version-3 writer reported (0: none)
	v3err   error    // how the version-3 writer ended otherwise
	inv2    error    // a write that named a descriptor's object before it was stored
}

type writer struct {
	x     *world
	agent int
	dead  bool // the current call was killed
}

type callLog struct {
	agent, commit int
	result        *Result
	err           error
}

func (x *world) logf(format string, a ...any) {
	x.trace = append(x.trace, fmt.Sprintf("[t%02d] ", x.ticks)+fmt.Sprintf(format, a...))
}

// modelClock: Now is the tick count; Wait advances one tick and returns.
type modelClock struct{ x *world }

func (c modelClock) Now() time.Time {
	return time.UnixMilli(1_700_000_000_000).Add(time.Duration(c.x.ticks) * tick)
}
func (c modelClock) Wait(ctx context.Context, d time.Duration) error {
	c.x.ticks++
	return ctx.Err()
}

// wstore is one writer's view of the store: scheduled or at once.
type wstore struct{ w *writer }

func (s wstore) Identity() string { return s.w.x.mem.Identity() }

func (s wstore) request(label string, cond bool, apply func() error) error {
	w, x := s.w, s.w.x
	if w.dead {
		return errKilled
	}
	op := &pendingOp{w: w, label: label, cond: cond, apply: apply, reply: make(chan error, 1)}
	x.ops = append(x.ops, op)
	x.parked <- struct{}{}
	return <-op.reply
}

func (s wstore) Get(ctx context.Context, key string) ([]byte, string, error) {
	if key != remote.CurrentKey {
		s.w.x.ticks++
		return s.w.x.mem.Get(ctx, key)
	}
	var data []byte
	var etag string
	err := s.request("GET current", false, func() (err error) {
		data, etag, err = s.w.x.mem.Get(ctx, key)
		return err
	})
	return data, etag, err
}

func (s wstore) Head(ctx context.Context, key string) (remote.ObjectInfo, error) {
	return s.w.x.mem.Head(ctx, key)
}

func (s wstore) Put(ctx context.Context, key string, data []byte) error {
	switch kind, g, _, _, _ := remote.ParseProposalEntry(key); {
	case kind == remote.EntryProposal:
		return s.request(fmt.Sprintf("PUT proposal on %d", g), false, func() error { return s.w.x.mem.Put(ctx, key, data) })
	case kind == remote.EntryCheckpoint:
		return s.request(fmt.Sprintf("PUT checkpoint descriptor of %d", g), false, func() error { return s.w.x.mem.Put(ctx, key, data) })
	}
	s.w.x.ticks++
	s.w.x.logf("writer %d: PUT %s (at once)", s.w.agent, strings.SplitN(key, "/", 2)[0])
	return s.w.x.mem.Put(ctx, key, data)
}

func (s wstore) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	var out []remote.ObjectInfo
	err := s.request("LIST proposals", false, func() (err error) {
		out, err = s.w.x.mem.List(ctx, prefix)
		return err
	})
	return out, err
}

func (s wstore) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	var etag string
	err := s.request("CREATE current", true, func() (err error) {
		etag, err = s.w.x.mem.CreateIfAbsent(ctx, key, data)
		if err == nil {
			s.w.x.wrote(data)
		}
		return err
	})
	return etag, err
}

func (s wstore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	var next string
	err := s.request("REPLACE current", true, func() (err error) {
		next, err = s.w.x.mem.ReplaceIfMatch(ctx, key, data, etag)
		switch {
		case err != nil:
		case remote.ManifestVersionOf(data) == remote.ManifestV4Version:
			s.w.x.wrote(data)
		default:
			// The version-3 writer's write applied (whatever its reply):
			// its increment pack is history from now on.
			m, derr := remote.DecodeManifest(data)
			if derr != nil {
				return derr
			}
			s.w.x.v3packs = append(s.w.x.v3packs, m.Increments[len(m.Increments)-1].Pack.Key)
		}
		return err
	})
	return next, err
}

func (s wstore) Delete(ctx context.Context, key string) error { return s.w.x.mem.Delete(ctx, key) }

// wrote records a version-4 write that applied, and checks invariant 2
// for the descriptors it names as the write applies: the objects of its
// checkpoints and rollups are stored already.
func (x *world) wrote(data []byte) {
	x.writes = append(x.writes, data)
	m, err := remote.DecodeManifestV4(data)
	if err != nil {
		return // the audit reports it
	}
	keys := []string{}
	for _, cp := range append([]remote.Checkpoint{m.Checkpoint}, m.Checkpoints...) {
		if !cp.IsGenesis() {
			keys = append(keys, cp.Pack.Key)
		}
	}
	for _, r := range m.Rollups {
		keys = append(keys, r.Key())
	}
	for _, k := range keys {
		if _, _, err := x.mem.Get(context.Background(), k); err != nil && x.inv2 == nil {
			x.inv2 = fmt.Errorf("invariant 2: write %d names %s, not stored: %v", len(x.writes)-1, k, err)
		}
	}
}

// pack returns the opened pack of an immutable object: a proposal's
// (after its descriptor) or a group pack.
func (x *world) pack(key string) (*cas.Pack, error) {
	if p, ok := x.packs[key]; ok {
		return p, nil
	}
	data, _, err := x.mem.Get(context.Background(), key)
	if err != nil {
		return nil, err
	}
	if kind, _, _, _, _ := remote.ParseProposalEntry(key); kind == remote.EntryProposal {
		if _, data, err = remote.DecodeProposalV4(key, data); err != nil {
			return nil, err
		}
	}
	p, err := cas.OpenPack(data)
	if err != nil {
		return nil, err
	}
	x.packs[key] = p
	return p, nil
}

type packsSource []*cas.Pack

func (s packsSource) Get(id cas.ID) (cas.Object, error) {
	for _, p := range s {
		if o, err := p.Get(id); err == nil {
			return o, nil
		}
	}
	return cas.Object{}, fmt.Errorf("object %s: %w", id, cas.ErrNotFound)
}

// objects is the harness's catch-up: every pack the state's tail names,
// read from the store directly (immutable objects: no schedule changes
// what they hold). The scope keeps the whole history in the tail, but
// for the version-3 generation of the v3 scope (in a segment once
// upgraded), whose increment pack the harness knows.
func (x *world) objects(_ context.Context, st State) (cas.Source, error) {
	m := st.Manifest
	if m == nil {
		return packsSource{}, nil
	}
	var src packsSource
	first := uint64(1)
	if x.sc.v3 {
		for _, k := range x.v3packs {
			p, err := x.pack(k)
			if err != nil {
				return nil, fmt.Errorf("a version-3 pack: %w", err)
			}
			src = append(src, p)
		}
		if len(m.Increments) == 0 {
			return src, nil // the upgrade's base: version-3 generations alone
		}
		first = m.Upgraded
	} else if len(m.Segments) > 0 {
		return nil, errors.New("harness: history beyond the tail")
	}
	if m.Increments[0].Generation != first {
		return nil, errors.New("harness: history beyond the tail")
	}
	for _, inc := range m.Increments {
		p, err := x.pack(inc.ProposalKey())
		if err != nil {
			return nil, fmt.Errorf("generation %d's proposal: %w", inc.Generation, err)
		}
		src = append(src, p)
		if inc.Group != (remote.GroupRef{}) {
			g, err := x.pack(inc.Group.Key())
			if err != nil {
				return nil, fmt.Errorf("generation %d's group pack: %w", inc.Generation, err)
			}
			src = append(src, g)
		}
	}
	return src, nil
}

func pubID(agent, commit int) string {
	return fmt.Sprintf("01900000-0000-7000-8000-%012x", agent*16+commit+1)
}

func ownFile(agent int) string { return fmt.Sprintf("w%d.md", agent) }

func ownContent(agent, commit int) string {
	return fmt.Sprintf("commit %d of writer %d\n", commit, agent)
}

func logLine(agent, commit int) string { return fmt.Sprintf("w%dc%d\n", agent, commit) }

// build is the writer's change: a line appended to log.md (every writer
// appends: concurrent appends merge), its own file rewritten, and in the
// conflict scope line 1 of shared.md replaced (concurrent ones conflict).
func (x *world) build(agent, commit int, id string) Build {
	return func(ctx context.Context, st State) (Change, error) {
		src, err := x.objects(ctx, st)
		if err != nil {
			return Change{}, err
		}
		files := map[string]cas.ID{}
		var tree cas.ID
		if !st.Head().IsZero() {
			if tree, files, err = commitFiles(src, st.Head()); err != nil {
				return Change{}, err
			}
		}
		read := func(p string) []byte {
			id, ok := files[p]
			if !ok {
				return nil
			}
			b, _ := cas.ReadFile(src, id)
			return b
		}
		sink := cas.NewObjectSet()
		changes := map[string]cas.ID{}
		put := func(p, content string) error {
			fid, err := cas.WriteFile(sink, []byte(content))
			changes[p] = fid
			return err
		}
		if err := put("log.md", string(read("log.md"))+logLine(agent, commit)); err != nil {
			return Change{}, err
		}
		if err := put(ownFile(agent), ownContent(agent, commit)); err != nil {
			return Change{}, err
		}
		if x.rewritesShared(agent) {
			_, rest, _ := strings.Cut(string(read("shared.md")), "\n")
			if err := put("shared.md", logLine(agent, commit)+rest); err != nil {
				return Change{}, err
			}
		}
		newTree, err := cas.UpdateTree(multi{sink, src}, sink, tree, changes)
		if err != nil {
			return Change{}, err
		}
		c := cas.EncodeCommit(cas.Commit{Tree: newTree, Parent: st.Head(), Publication: id,
			Time: modelClock{x}.Now(), Message: []byte(fmt.Sprintf("writer %d commit %d", agent, commit))})
		if err := sink.Put(c); err != nil {
			return Change{}, err
		}
		pack, err := packOf(sink)
		return Change{Head: c.ID, Pack: pack, Author: fmt.Sprintf("writer %d", agent)}, err
	}
}

// rewritesShared: the agent's commits rewrite line 1 of shared.md.
func (x *world) rewritesShared(agent int) bool {
	return x.sc.conflict && (!x.sc.bystander || agent != x.sc.writers-1)
}

type multi []cas.Source

func (m multi) Get(id cas.ID) (cas.Object, error) {
	for _, s := range m {
		if o, err := s.Get(id); err == nil {
			return o, nil
		}
	}
	return cas.Object{}, fmt.Errorf("object %s: %w", id, cas.ErrNotFound)
}

const storeID = "00112233445566778899aabbccddeeff"

// runWriter runs one writer's commits, one after another; a killed call
// is followed by the next commit, as a new process would.
func (x *world) runWriter(w *writer) {
	defer func() { x.parked <- struct{}{} }()
	var prev Streak
	for k := 0; k < x.sc.commits; k++ {
		w.dead = false
		id := pubID(w.agent, k)
		x.calls[id] = &callLog{agent: w.agent, commit: k}
		x.order = append(x.order, id)
		opts := Options{Store: storeID, Clock: modelClock{x}, Objects: x.objects, K: 4, M: 4,
			CondEstimate: 200 * time.Millisecond, RTT: 20 * time.Millisecond, Parallel: 1,
			Jitter:             func() float64 { return 0.5 },
			mutateIgnoreRecent: x.sc.mutate, mutateReportLast: x.sc.mutateLast,
			Trace: func(s string) {
				if strings.HasPrefix(s[6:], "alone:") {
					skipsSeen++
				}
				if strings.HasPrefix(s[6:], "gather:") {
					gathersSeen++
				}
				if strings.HasPrefix(s[6:], "declined ours (at 0 ") {
					ownDeclinedSeen++
				}
				var n, g, added int
				if _, err := fmt.Sscanf(s[6:], "fold of %d on %d: %d folded now", &n, &g, &added); err == nil && added < n {
					piecesSeen++
				}
				x.logf("writer %d: %s", w.agent, s)
			}}
		if x.sc.gather {
			opts.Gather = 4 * tick
		}
		p, err := New(wstore{w}, opts)
		if err != nil {
			x.calls[id].err = err
			return
		}
		var first uint64
		built := false
		b := x.build(w.agent, k, id)
		build := func(ctx context.Context, st State) (Change, error) {
			if !built {
				first, built = st.Generation(), true
			}
			return b(ctx, st)
		}
		var r Result
		if x.sc.chain {
			r, err = p.CommitAfter(context.Background(), id, prev, build)
		} else {
			r, err = p.Commit(context.Background(), id, build)
		}
		if err != nil && w.dead && built && x.sc.resume {
			x.logf("writer %d commit %d: %v; resumed from generation %d", w.agent, k, err, first)
			w.dead = false
			if p, err = New(wstore{w}, opts); err == nil {
				r, err = p.Resume(context.Background(), id, first, build)
			}
		}
		prev = r.Streak // the zero Streak after an error: a new process knows none
		if err != nil {
			x.calls[id].err = err
			x.logf("writer %d commit %d: %v", w.agent, k, err)
			continue
		}
		x.calls[id].result = &r
		x.logf("writer %d commit %d: accepted at %d", w.agent, k, r.Generation)
	}
}

// skipsSeen counts the folds made without a LIST (the LIST-skip rule),
// so that the chained scope shows the rule fired.
var skipsSeen int

// gathersSeen counts the gathers and piecesSeen the folds extended
// rather than begun, so that the gather scope shows folds in pieces.
var gathersSeen, piecesSeen int

// ownDeclinedSeen counts the writes a folder won that declined its own
// version, first in the fold order (it did not merge onto C), and
// accepted others'.
var ownDeclinedSeen int

// runSchedule runs one schedule and audits it.
func runSchedule(sc scope, choose crashpoint.Choose) crashpoint.Outcome {
	x := &world{sc: sc, mem: memstore.New(), choose: choose, parked: make(chan struct{}),
		packs: map[string]*cas.Pack{}, calls: map[string]*callLog{}}
	if sc.v3 {
		if err := x.seedV3(); err != nil {
			return crashpoint.Outcome{Err: err}
		}
	} else if sc.conflict || sc.builder {
		if err := x.seed(); err != nil {
			return crashpoint.Outcome{Err: err}
		}
	}
	for a := 0; a < sc.writers; a++ {
		w := &writer{x: x, agent: a}
		x.writers = append(x.writers, w)
		go x.runWriter(w)
		<-x.parked // it runs alone until it blocks or ends
	}
	if sc.v3writer {
		w := &writer{x: x, agent: sc.writers}
		x.writers = append(x.writers, w)
		go x.runV3Writer(w)
		<-x.parked
	}
	if sc.builder {
		w := &writer{x: x, agent: sc.writers}
		x.writers = append(x.writers, w)
		go x.runBuilder(w)
		<-x.parked
	}
	cut := false
	for len(x.ops) > 0 {
		if x.steps >= sc.depth {
			cut = true
			break
		}
		i := choose(len(x.ops), false)
		op := x.ops[i]
		x.ops = slices.Delete(x.ops, i, i+1)
		x.steps++
		x.ticks++
		f := 0
		if x.faults < sc.faults {
			n := 3
			if op.cond {
				n = 6
			}
			f = choose(n, true)
		}
		if f != 0 {
			x.faults++
		}
		var err error
		switch f {
		case 0:
			err = op.apply()
		case 1:
			err = errKilled
		case 2:
			_ = op.apply()
			err = errKilled
		case 3:
			_ = op.apply()
			err = remote.ErrAmbiguous
		case 4:
			err = remote.ErrAmbiguous
		case 5:
			err = remote.ErrRateLimited
		}
		x.logf("writer %d: %s%s -> %v", op.w.agent, op.label,
			[]string{"", " (dies before)", " (dies after)", " (reply lost, applied)", " (reply lost, not applied)", " (429, not applied)"}[f], errText(err))
		if errors.Is(err, errKilled) {
			op.w.dead = true
		}
		op.reply <- err
		<-x.parked
	}
	// Cut: every blocked writer dies, one at a time.
	for len(x.ops) > 0 {
		op := x.ops[0]
		x.ops = x.ops[1:]
		op.w.dead = true
		x.sc.commits = 0 // no new calls after the cut
		op.reply <- errKilled
		<-x.parked
	}
	err := x.audit(cut)
	return crashpoint.Outcome{Cut: cut, Faulted: x.faults > 0, Err: err, Trace: x.trace}
}

// seed writes generation 1 before the writers start (not scheduled):
// shared.md with two lines, so that commits that rewrite its line 1
// conflict instead of both adding it.
func (x *world) seed() error {
	ctx := context.Background()
	id := pubID(15, 15)
	x.calls[id] = &callLog{agent: -1}
	c, pack, err := seedCommit(id, modelClock{x}.Now())
	if err != nil {
		return err
	}
	prop, err := remote.EncodeProposalV4(remote.ProposalV4{Publication: id, Head: c}, pack)
	if err != nil {
		return err
	}
	if err := x.mem.Put(ctx, remote.ProposalKey(0, id), prop); err != nil {
		return err
	}
	m, _, err := remote.NextV4(nil, storeID, 0, []remote.MemberV4{{Publication: id, Head: c}}, remote.GroupRef{}, nil)
	if err != nil {
		return err
	}
	data, err := remote.EncodeManifestV4(m)
	if err != nil {
		return err
	}
	x.writes = append(x.writes, data)
	_, err = x.mem.CreateIfAbsent(ctx, remote.CurrentKey, data)
	return err
}

// seedV3 writes generation 1 as a version-3 writer would (its increment
// pack, a version-3 `current`), the same commit as seed's: the writers'
// first write upgrades the store. Not one of the writes the audit
// decodes as version 4.
func (x *world) seedV3() error {
	ctx := context.Background()
	id := pubID(15, 15)
	c, pack, err := seedCommit(id, modelClock{x}.Now())
	if err != nil {
		return err
	}
	ref := remote.PackRef{Key: remote.IncrementKey(1, id), Sum: cas.Sum(pack), Size: int64(len(pack))}
	m, err := (*remote.Manifest)(nil).ExtendAt(id, c, ref, 1)
	if err != nil {
		return err
	}
	data, err := remote.EncodeManifest(m)
	if err != nil {
		return err
	}
	if err := x.mem.Put(ctx, ref.Key, pack); err != nil {
		return err
	}
	x.v3packs = []string{ref.Key}
	_, err = x.mem.CreateIfAbsent(ctx, remote.CurrentKey, data)
	return err
}

// v3Outcomes counts, over the schedules run, the version-3 writer's
// acceptances and its refusals by version (the test requires both).
var v3Outcomes [2]int

// v3ID is the version-3 writer's publication ID.
var v3ID = pubID(14, 0)

// runV3Writer is a binary of format 3 committing once: GET current, its
// increment pack, the conditional write; after a 412 or 429 it reads
// again. A `current` it cannot read (version 4: FORMAT_NEWER) ends it, as
// does a death or a lost reply (it does not resolve one: the audit
// learns from the store whether the write applied). Its commit changes no
// file (the same tree on a new commit), so the writers' lines stand.
func (x *world) runV3Writer(w *writer) {
	defer func() { x.parked <- struct{}{} }()
	ctx, st := context.Background(), wstore{w}
	for {
		data, etag, err := st.Get(ctx, remote.CurrentKey)
		if err != nil {
			x.v3err = err
			return
		}
		old, err := remote.DecodeManifest(data)
		if err != nil {
			x.v3err = err
			x.logf("writer %d (version 3): %v", w.agent, err)
			return
		}
		gen := old.Generation + 1
		var src packsSource
		for _, k := range x.v3packs {
			p, err := x.pack(k)
			if err != nil {
				x.v3err = err
				return
			}
			src = append(src, p)
		}
		tree, _, err := commitFiles(src, old.Head)
		if err != nil {
			x.v3err = err
			return
		}
		c := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: old.Head, Publication: v3ID, Time: modelClock{x}.Now(), Message: []byte("version 3")})
		pw := cas.NewPackWriter()
		if err := pw.Put(c); err != nil {
			x.v3err = err
			return
		}
		pack, err := pw.Finish()
		if err != nil {
			x.v3err = err
			return
		}
		ref := remote.PackRef{Key: remote.IncrementKey(gen, v3ID), Sum: cas.Sum(pack), Size: int64(len(pack))}
		next, err := old.ExtendAt(v3ID, c.ID, ref, 1)
		if err == nil {
			data, err = remote.EncodeManifest(next)
		}
		if err == nil {
			err = st.Put(ctx, ref.Key, pack)
		}
		if err == nil {
			_, err = st.ReplaceIfMatch(ctx, remote.CurrentKey, data, etag)
		}
		switch {
		case err == nil:
			x.v3gen = gen
			x.logf("writer %d (version 3): accepted at %d", w.agent, gen)
			return
		case errors.Is(err, remote.ErrPrecondition), errors.Is(err, remote.ErrRateLimited):
			continue
		}
		x.v3err = err
		return
	}
}

// builderID is the checkpoint builder's publication ID (its checkpoint's).
var builderID = pubID(13, 0)

// copiedSeen counts the schedules whose last write made the builder's
// checkpoint the active one (the builder scope requires some).
var copiedSeen int

// runBuilder is a checkpoint builder (docs/publication.md §5.2 step 3):
// the checkpoint of generation 1 (the seed commit: its whole closure),
// PUT at once, then its descriptor registered by a scheduled PUT; before
// it, at once, a rollup descriptor of the block 5..8, which no write of
// the scope reaches (a fold must skip it).
func (x *world) runBuilder(w *writer) {
	defer func() { x.parked <- struct{}{} }()
	ctx, st := context.Background(), wstore{w}
	head, pack, err := seedCommit(pubID(15, 15), time.UnixMilli(1_700_000_000_000))
	if err != nil {
		x.logf("builder: %v", err)
		return
	}
	cp := remote.Checkpoint{Pack: remote.PackRef{Key: remote.CheckpointKey(1, builderID), Sum: cas.Sum(pack), Size: int64(len(pack))},
		Head: head, Through: 1, Publication: builderID}
	early := remote.Registered{Kind: remote.EntryRollup, Rollup: remote.RollupRef{Level: 2, First: 5, Sum: cas.Sum(pack), Size: int64(len(pack))}}
	for i, r := range []remote.Registered{early, {Kind: remote.EntryCheckpoint, Checkpoint: cp}} {
		k, data, err := remote.EncodeRegistered(r)
		if err == nil {
			err = st.Put(ctx, []string{early.Rollup.Key(), cp.Pack.Key}[i], pack)
		}
		if err == nil {
			err = st.Put(ctx, k, data)
		}
		if err != nil {
			x.logf("builder: %v", err)
			return
		}
	}
	x.logf("builder: registered")
}

// seedCommit is generation 1's commit (shared.md, two lines) and its pack.
func seedCommit(id string, at time.Time) (cas.ID, []byte, error) {
	sink := cas.NewObjectSet()
	fid, err := cas.WriteFile(sink, []byte("line 1\nline 2\n"))
	if err != nil {
		return cas.ID{}, nil, err
	}
	tree, err := cas.WriteTree(sink, map[string]cas.ID{"shared.md": fid})
	if err != nil {
		return cas.ID{}, nil, err
	}
	c := cas.EncodeCommit(cas.Commit{Tree: tree, Publication: id, Time: at})
	pw := cas.NewPackWriter()
	for _, o := range []cas.ID{fid, tree} {
		obj, _ := sink.Get(o)
		if err := pw.Put(obj); err != nil {
			return cas.ID{}, nil, err
		}
	}
	if err := pw.Put(c); err != nil {
		return cas.ID{}, nil, err
	}
	pack, err := pw.Finish()
	return c.ID, pack, err
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	switch {
	case errors.Is(err, remote.ErrPrecondition):
		return "412"
	case errors.Is(err, remote.ErrNotFound):
		return "404"
	case errors.Is(err, remote.ErrRateLimited):
		return "429"
	}
	return err.Error()
}

// audit checks invariants 1–8 of docs/publication.md §6 as far as one
// schedule shows them.
func (x *world) audit(cut bool) error {
	var prev *remote.ManifestV4
	if x.sc.v3 {
		x.calls[pubID(15, 15)] = &callLog{agent: -1} // generation 1, below the upgrade
	}
	for i, data := range x.writes {
		m, err := remote.DecodeManifestV4(data)
		if err != nil {
			return fmt.Errorf("write %d of current: %w", i, err)
		}
		// Invariants 3, 4: each write extends the last, member i at C+i,
		// and no ID twice (DecodeManifestV4 refuses one twice in recent).
		var base uint64
		if x.sc.v3 {
			// The first write upgrades the version-3 generations (1, and
			// 2 when the version-3 writer's write landed first).
			base = uint64(len(x.v3packs))
			if m.Upgraded != base+1 {
				return fmt.Errorf("write %d: upgraded at %d, not right after the %d version-3 generations", i, m.Upgraded, base)
			}
		}
		if prev != nil {
			if m.Generation <= prev.Generation || !slices.Equal(m.Recent[:len(prev.Recent)], prev.Recent) {
				return fmt.Errorf("write %d does not extend the one before it", i)
			}
			base = prev.Generation
		}
		// Invariant 8's rule: a write on C folds only versions built on
		// G with C − G < K.
		for _, inc := range m.Increments {
			if inc.Generation > base && base-inc.Proposal >= 4 {
				return fmt.Errorf("invariant 8: write %d on %d folds a version built on %d", i, base, inc.Proposal)
			}
		}
		prev = m
	}
	final := prev
	stored := map[string]bool{}
	objs, _ := x.mem.List(context.Background(), "")
	for _, o := range objs {
		stored[o.Key] = true
	}
	if final == nil {
		if stored[remote.CurrentKey] && !x.sc.v3 {
			return errors.New("current is stored but no write of it was acknowledged by the store")
		}
	} else {
		// Invariant 2: every object `current` names is stored; the
		// closure of every head is in the packs it names.
		src, err := x.objects(context.Background(), State{Manifest: final})
		if err != nil {
			return fmt.Errorf("invariant 2: %w", err)
		}
		for _, inc := range final.Increments {
			if err := cas.CheckClosure(src, inc.Head); err != nil {
				return fmt.Errorf("invariant 2: generation %d: %w", inc.Generation, err)
			}
		}
		// What the store holds is the last write acknowledged: nothing
		// (a version-3 write) replaced a version-4 `current`.
		if data, _, err := x.mem.Get(context.Background(), remote.CurrentKey); err != nil || !bytes.Equal(data, x.writes[len(x.writes)-1]) {
			return fmt.Errorf("current is not the last version-4 write: %v", err)
		}
		// The upgrade keeps the version-3 generations readable: listed by
		// the segment the upgrade made, naming their increment packs.
		if x.sc.v3 {
			n := uint64(len(x.v3packs))
			old, _, err := final.Publications(context.Background(), x.mem, 1, n)
			if err != nil || len(old) != len(x.v3packs) {
				return fmt.Errorf("the upgrade lost version-3 generations: %v %v", old, err)
			}
			for i, inc := range old {
				if inc.Pack.Key != x.v3packs[i] {
					return fmt.Errorf("the upgrade lists generation %d with another pack", inc.Generation)
				}
			}
		}
		// Invariants 4, 5: each member's head holds its change merged
		// onto everything accepted before it.
		var lines []string
		for _, inc := range final.Increments {
			cl := x.calls[inc.Publication]
			if cl == nil {
				return fmt.Errorf("generation %d names %s, which no call made", inc.Generation, inc.Publication)
			}
			_, files, err := commitFiles(src, inc.Head)
			if err != nil {
				return err
			}
			read := func(p string) string {
				b, _ := cas.ReadFile(src, files[p])
				return string(b)
			}
			if cl.agent >= 0 {
				lines = append(lines, logLine(cl.agent, cl.commit))
			}
			if got := read("log.md"); !sameLines(got, lines) {
				return fmt.Errorf("invariant 5: log.md at generation %d is %q, want the lines %q", inc.Generation, got, lines)
			}
			if cl.agent < 0 {
				continue // the seed commit
			}
			if got := read(ownFile(cl.agent)); !strings.Contains(got, ownContent(cl.agent, cl.commit)) || strings.Contains(got, "<<<<<<<") {
				return fmt.Errorf("invariant 5: %s at generation %d is %q", ownFile(cl.agent), inc.Generation, got)
			}
			if x.rewritesShared(cl.agent) {
				if got := read("shared.md"); !strings.HasPrefix(got, logLine(cl.agent, cl.commit)) || strings.Contains(got, "<<<<<<<") || !strings.HasSuffix(got, "line 2\n") {
					return fmt.Errorf("invariant 5: shared.md at generation %d is %q", inc.Generation, got)
				}
			}
		}
	}
	if x.inv2 != nil {
		return x.inv2
	}
	// Descriptors (invariants 9, 10): a checkpoint in `current` holds
	// exactly the tree of its through generation's head, and a rollup in
	// it ends at or below its generation (the builder's early block never
	// does in this scope).
	if final != nil && x.sc.builder {
		if len(final.Rollups) > 0 {
			return fmt.Errorf("invariant 10: the write of %d copied a rollup of a block not ended", final.Generation)
		}
		if cp := final.Checkpoint; !cp.IsGenesis() {
			copiedSeen++
			inc, ok := final.Increment(cp.Through)
			if !ok || inc.Head != cp.Head {
				return fmt.Errorf("invariant 9: the checkpoint through %d is not that generation's head", cp.Through)
			}
			p, err := x.pack(cp.Pack.Key)
			if err == nil {
				err = cas.CheckClosure(p, cp.Head)
			}
			if err != nil {
				return fmt.Errorf("invariant 9: the checkpoint through %d: %w", cp.Through, err)
			}
		}
	}
	// Invariants 1, 4, 6: a call reports exactly the generation that
	// names its ID, and that generation's head.
	for _, id := range x.order {
		cl := x.calls[id]
		if cl.result == nil {
			continue
		}
		r := cl.result
		if final == nil || final.AcceptedAt(id) != r.Generation {
			return fmt.Errorf("invariant 4: commit %s reported generation %d, which does not name it", id, r.Generation)
		}
		if inc, _ := final.Increment(r.Generation); inc.Head != r.Head {
			return fmt.Errorf("invariant 4: commit %s reported another head than generation %d's", id, r.Generation)
		}
	}
	// The version-3 writer: accepted only below the upgrade, at the
	// generation the history names it; refused by its version only once
	// a version-4 `current` exists; otherwise killed or left unresolved.
	if x.sc.v3writer {
		switch {
		case x.v3gen > 0:
			v3Outcomes[0]++
			if x.v3gen > uint64(len(x.v3packs)) || x.v3packs[x.v3gen-1] != remote.IncrementKey(x.v3gen, v3ID) {
				return fmt.Errorf("the version-3 writer reported generation %d, which does not name it", x.v3gen)
			}
		case errors.Is(x.v3err, remote.ErrFormatNewer):
			v3Outcomes[1]++
			if final == nil {
				return errors.New("the version-3 writer refused a store that is still version 3")
			}
		case !cut && !errors.Is(x.v3err, errKilled) && !errors.Is(x.v3err, remote.ErrAmbiguous):
			return fmt.Errorf("liveness: the version-3 writer ended with %v", x.v3err)
		}
	}
	// Liveness: a schedule that ran out of requests left every call
	// accepted or killed.
	if !cut {
		for _, id := range x.order {
			if cl := x.calls[id]; cl.result == nil && !errors.Is(cl.err, errKilled) {
				return fmt.Errorf("liveness: commit %s ended with %v", id, cl.err)
			}
		}
	}
	return nil
}

// sameLines: got holds exactly the lines want, in any order (concurrent
// appends are merged in fold order, not acceptance order of writers).
func sameLines(got string, want []string) bool {
	g := strings.SplitAfter(got, "\n")
	if len(g) > 0 && g[len(g)-1] == "" {
		g = g[:len(g)-1]
	}
	a, b := slices.Clone(g), slices.Clone(want)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
