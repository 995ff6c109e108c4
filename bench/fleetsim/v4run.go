package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/bench"
	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Engines Config.Engine names.
const (
	EngineServer  = ""        // server.Engine, the default
	EnginePublish = "publish" // agents calling publish.Publisher.Commit (format v4)
)

// Catch-up policies of the publish mode (Config.CatchUp).
const (
	// CatchUpFull fetches every proposal and group pack the manifest
	// names since the generation the agent knows, as an engine
	// materialising the whole notebook must without rollups.
	CatchUpFull = ""
	// CatchUpLazy fetches the newest generation's packs, and older ones
	// only when the build or the fold misses an object: the least any
	// engine fetches to publish (its directory would lack the other
	// agents' new text). It stands for catch-up by rollups, which
	// publish does not register yet, so that the publication path can be
	// measured at fleet sizes where full catch-up does not fit in this
	// machine.
	CatchUpLazy = "lazy"
)

// v4Store is the store ID of the publish mode's notebook.
const v4Store = "5f1ee75f1ee75f1ee75f1ee75f1ee700"

// GenAudit checks what the publish mode's agents were told against the
// history: every reported generation names the reporting call's ID, no
// two calls were told the same generation, and every generation the run
// added was reported to one accepted call.
type GenAudit struct {
	Reported    int    // accepted calls
	Distinct    int    // distinct generations reported
	Added       uint64 // generations the run added
	WrongID     int    // reported generations whose increment names another ID
	DuplicateID int    // IDs the history names twice
}

// OK: every check passed.
func (g GenAudit) OK() bool {
	return g.Distinct == g.Reported && uint64(g.Reported) == g.Added && g.WrongID == 0 && g.DuplicateID == 0
}

// runV4 is Run with Config.Engine == EnginePublish: the same store,
// latency model, clock, arrivals, line audit and report, with agents
// that publish through package publish instead of server.Engine.
func runV4(ctx context.Context, cfg Config) (*Result, error) {
	cfg.clock = modelClock{scale: cfg.Model.Scale, t0: time.Now()}
	clock := pubClock{cfg.clock}
	mem := memstore.New()
	store := NewLatency(mem, cfg.Model, cfg.Seed)
	catch := &catchUpStore{inner: store, on: store.on.Load}
	shared := &packCache{packs: map[string]*cas.Pack{}}
	var lands landings
	if cfg.Breakdown > 0 {
		store.onWrite = lands.onWrite
	}
	switch cfg.CatchUp {
	case CatchUpFull, CatchUpLazy:
	default:
		return nil, fmt.Errorf("fleetsim: unknown catch-up %q", cfg.CatchUp)
	}
	res := &Result{Engine: EnginePublish, CatchUpPolicy: cfg.CatchUp, Warmup: cfg.Warmup, Agents: cfg.Agents, Windows: cfg.Windows, Window: cfg.Window, Burst: cfg.Burst, Model: store.model, Seed: cfg.Seed, Other: map[string]int{}, OtherCause: map[string]string{}}

	setup0 := time.Now()
	agents, gen0, err := setupV4(ctx, cfg, store, catch, shared, clock)
	if err != nil {
		return nil, err
	}
	res.SetupReal = time.Since(setup0)
	cfg.Progress("set-up of %d agents in %v", cfg.Agents, res.SetupReal.Round(time.Millisecond))

	instants := schedule(cfg)
	scale := store.model.Scale
	real := func(d time.Duration) time.Duration { return time.Duration(float64(d) / scale) }
	model := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }

	store.Enable(true)
	store.Take()
	cpu0 := cpuTime()
	res.Load = appendLoad(res.Load)
	t0 := time.Now().Add(50 * time.Millisecond)
	deadline := t0.Add(real(time.Duration(cfg.Windows)*cfg.Window + cfg.Cap))
	var lastOK atomic.Int64 // real nanoseconds after t0
	var accepted atomic.Int64
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		warm := time.NewTimer(time.Until(t0.Add(real(cfg.Warmup))))
		defer warm.Stop()
		if cfg.Warmup <= 0 {
			warm.Stop()
		}
		for {
			select {
			case <-done:
				return
			case <-warm.C:
				// The measured part starts: requests before it are the
				// warm-up's.
				store.Take()
				catch.take()
				cfg.Progress("warm-up over")
			case <-tick.C:
				cfg.Progress("%v: %d of %d accepted", time.Since(t0).Round(time.Second), accepted.Load(), cfg.Agents*cfg.Windows)
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make([]error, len(agents))
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range cfg.Windows {
				at := t0.Add(real(instants[w][i]))
				if err := sleepUntil(ctx, at); err != nil {
					errs[i] = err
					return
				}
				a.edit(cfg.Payload)
				a.trace = a.trace[:0]
				ok, err := a.commit(ctx, deadline, cfg.MaxTries)
				if err != nil {
					errs[i] = err
					return
				}
				if ok {
					now := time.Now()
					a.latency = append(a.latency, now.Sub(at))
					a.measured = append(a.measured, instants[w][i] >= cfg.Warmup)
					a.okAt = append(a.okAt, model(now.Sub(t0)))
					if cfg.Breakdown > 0 {
						a.reqMu.Lock()
						a.times = append(a.times, rawTimes{at, a.startAt, a.regAt, now, a.ids[len(a.ids)-1].gen, instants[w][i] >= cfg.Warmup, a.lastRead, a.reads})
						a.reqMu.Unlock()
					}
					accepted.Add(1)
					if cfg.TraceSlow > 0 && model(now.Sub(at)) > cfg.TraceSlow && len(res.SlowTrace) == 0 {
						traceMu.Lock()
						if len(res.SlowTrace) == 0 {
							res.SlowTrace = append([]string{fmt.Sprintf("%s, instant %v, accepted after %v:", a.tag, instants[w][i].Round(time.Millisecond), model(now.Sub(at)).Round(time.Millisecond))}, a.trace...)
						}
						traceMu.Unlock()
					}
					for {
						old := lastOK.Load()
						if int64(now.Sub(t0)) <= old || lastOK.CompareAndSwap(old, int64(now.Sub(t0))) {
							break
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	res.Real = time.Since(t0)
	res.CPU = cpuTime() - cpu0
	res.Load = appendLoad(res.Load)
	store.Enable(false)
	res.Counts = store.Take()
	res.CatchUp = catch.take()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	var lat, calls []time.Duration
	var acceptedLines, written []string
	var ids []reported
	for _, a := range agents {
		res.Accepted += a.ok
		res.Busy += a.busy
		res.GaveUp += a.gaveUp
		res.Calls += a.calls
		res.Versions += a.versions
		for k, v := range a.cause {
			if _, seen := res.OtherCause[k]; !seen {
				res.OtherCause[k] = v
			}
		}
		for i, d := range a.latency {
			if a.measured[i] {
				lat = append(lat, model(d))
			}
			if a.okAt[i] >= cfg.Warmup {
				res.MeasuredAccepted++
			}
		}
		for _, d := range a.callLatency {
			calls = append(calls, model(d))
		}
		acceptedLines = append(acceptedLines, a.accepted...)
		written = append(written, a.written...)
		ids = append(ids, a.ids...)
	}
	res.Offered = cfg.Agents * cfg.Windows
	res.OfferedPerSec = float64(res.Offered) / (time.Duration(cfg.Windows) * cfg.Window).Seconds()
	res.Elapsed = model(time.Duration(lastOK.Load())) - cfg.Warmup
	if res.Elapsed > 0 {
		res.CommitsPerSec = float64(res.MeasuredAccepted) / res.Elapsed.Seconds()
	}
	res.Latency, res.CallLatency = percentiles(lat), percentiles(calls)
	if cfg.Breakdown > 0 {
		since := func(t time.Time) time.Duration { return model(t.Sub(t0)) }
		var cs []commitTimes
		for ai, a := range agents {
			for _, t := range a.times {
				cs = append(cs, commitTimes{since(t.instant), since(t.start), since(t.registered), since(t.learned), t.gen, t.measured,
					since(t.read.start), since(t.read.end), t.reads, ai})
			}
		}
		reqs := make([][]span, len(agents))
		for i, a := range agents {
			for _, r := range a.reqs {
				reqs[i] = append(reqs[i], span{r.kind, since(r.start), since(r.end), r.gen})
			}
		}
		// The folder LISTs for its gather Gather after the write it builds
		// on should have landed: its sending, one estimate and a round
		// trip (publish's landed(); the estimates are the model's here).
		gather := cfg.Gather
		if gather <= 0 {
			gather = 5*cfg.Model.RTT + max(2*cfg.Model.RTT, cfg.Model.CondService/16) // publish's default
		}
		gather += cfg.Model.CondService + cfg.Model.RTT
		ls := make([]landing, len(lands.all))
		for i, l := range lands.all {
			ls[i] = landing{since(l.sent), since(l.at), l.first, l.last}
		}
		res.Breakdown = breakdown(cs, ls, reqs, cfg.Warmup, cfg.Breakdown, gather)
	}
	res.S3DollarsPerMillion = bench.S3DollarsPerMillion(res.Counts.S3Dollars(), res.MeasuredAccepted)

	gen, tree, hist, err := auditV4(ctx, mem, shared)
	if err != nil {
		return nil, fmt.Errorf("fleetsim: audit: %w", err)
	}
	res.Generations = gen - gen0
	res.Audit = checkLines(tree, acceptedLines, written)
	res.GenAudit = genAudit(hist, ids, gen0, gen)
	return res, nil
}

// traceMu guards the one slow commit's trace a run keeps.
var traceMu sync.Mutex

// setupV4 publishes generation 1, one file per agent, with the latency
// model off (not measured), and gives every agent its Publisher and a
// cache caught up to it.
func setupV4(ctx context.Context, cfg Config, store *Latency, catch *catchUpStore, shared *packCache, clock pubClock) ([]*v4agent, uint64, error) {
	agents := make([]*v4agent, cfg.Agents)
	files := map[string]cas.ID{}
	sink := cas.NewObjectSet()
	for i := range agents {
		tag := fmt.Sprintf("a%04d", i)
		a := &v4agent{tag: tag, path: tag + ".md", content: []byte("# " + tag + "\n"), store: catch, shared: shared,
			keep: 2 * publish.DefaultK, clock: clock, packs: map[string]uint64{}, index: map[cas.ID]*cas.Pack{},
			byKey: map[string]*cas.Pack{}, published: map[cas.ID]bool{}, cause: map[string]string{}, lazy: cfg.CatchUp == CatchUpLazy,
			heads: map[cas.ID]remote.IncrementV4{}, segs: map[string]*remote.SegmentV4{}}
		var err error
		if files[a.path], err = cas.WriteFile(sink, a.content); err != nil {
			return nil, 0, err
		}
		opts := publish.Options{Store: v4Store, Clock: clock, Objects: a.objects,
			CondEstimate: cfg.Model.CondService, RTT: cfg.Model.RTT, Gather: cfg.Gather, Parallel: cfg.FoldParallel}
		if cfg.TraceSlow > 0 {
			opts.Trace = func(s string) {
				a.trace = append(a.trace, fmt.Sprintf("%9.3f s %s", float64(clock.Now().Sub(cfg.clock.t0))/float64(time.Second), s))
			}
			a.traceOn = opts.Trace
		}
		var ps remote.Store = store
		if cfg.Breakdown > 0 {
			ps, a.noting = agentStore{store, a}, true
		}
		if a.pub, err = publish.New(ps, opts); err != nil {
			return nil, 0, err
		}
		agents[i] = a
	}
	root, err := cas.WriteTree(sink, files)
	if err != nil {
		return nil, 0, err
	}
	seed, err := publish.New(store, publish.Options{Store: v4Store, Clock: clock,
		Objects: func(context.Context, publish.State) (cas.Source, error) { return sink, nil }})
	if err != nil {
		return nil, 0, err
	}
	id := remote.NewUUIDv7()
	r, err := seed.Commit(ctx, id, func(context.Context, publish.State) (publish.Change, error) {
		head := cas.EncodeCommit(cas.Commit{Tree: root, Publication: id, Time: clock.Now(), Message: []byte("set-up")})
		if err := sink.Put(head); err != nil {
			return publish.Change{}, err
		}
		pack, _, err := packOf(sink, nil)
		return publish.Change{Head: head.ID, Pack: pack, Author: "set-up"}, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("seed commit: %w", err)
	}
	for _, a := range agents {
		if err := a.catchUp(ctx, r.State); err != nil {
			return nil, 0, err
		}
	}
	return agents, r.Generation, nil
}

// edit appends the agent's next tagged line and payload to its file, as
// the engines' agents do (agent.edit).
func (a *v4agent) edit(payload int) {
	line := fmt.Sprintf("%s-c%03d %s", a.tag, a.seq, strings.TrimSpace(string(bench.NoteText(a.seq*10007+len(a.written), 48))))
	line = strings.ReplaceAll(line, "\n", " ")
	block := line + "\n" + string(bench.NoteText(a.seq*131+int(a.tag[4]), payload))
	a.seq++
	a.content = append(a.content, block...)
	a.pending = append(a.pending, line)
	a.written = append(a.written, line)
}

// auditV4 reads the final notebook from the store (no latency, nothing
// counted): its generation, its files and the history of every
// generation, oldest first.
func auditV4(ctx context.Context, mem remote.Store, shared *packCache) (uint64, map[string][]byte, []remote.IncrementV4, error) {
	data, _, err := mem.Get(ctx, remote.CurrentKey)
	if err != nil {
		return 0, nil, nil, err
	}
	m, err := remote.DecodeManifestV4(data)
	if err != nil {
		return 0, nil, nil, err
	}
	reader := &v4agent{tag: "audit", store: &catchUpStore{inner: mem, on: func() bool { return false }}}
	hist, err := reader.increments(ctx, m, 1)
	if err != nil {
		return 0, nil, nil, err
	}
	// Every pack in the store: a file's chunks lie in the proposals of
	// the commits that wrote them, however old.
	var src []*cas.Pack
	for _, prefix := range []string{remote.ProposalsPrefix, remote.GroupsPrefix} {
		objs, err := mem.List(ctx, prefix)
		if err != nil {
			return 0, nil, nil, err
		}
		for _, o := range objs {
			if kind, _, _, _, _ := remote.ParseProposalEntry(o.Key); kind == remote.EntryMarker {
				continue
			}
			data, _, err := mem.Get(ctx, o.Key)
			if err != nil {
				return 0, nil, nil, err
			}
			p, err := shared.open(o.Key, data)
			if err != nil {
				return 0, nil, nil, err
			}
			src = append(src, p)
		}
	}
	idx := indexed{}
	for _, p := range src {
		for _, id := range p.IDs() {
			idx[id] = p
		}
	}
	c, err := cas.ReadCommit(idx, m.Head)
	if err != nil {
		return 0, nil, nil, err
	}
	paths, err := cas.ReadTree(idx, c.Tree)
	if err != nil {
		return 0, nil, nil, err
	}
	tree := map[string][]byte{}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		if tree[p], err = cas.ReadFile(idx, paths[p]); err != nil {
			return 0, nil, nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return m.Generation, tree, hist, nil
}

// indexed is a cas.Source over packs indexed by object ID.
type indexed map[cas.ID]*cas.Pack

func (x indexed) Get(id cas.ID) (cas.Object, error) {
	if p := x[id]; p != nil {
		return p.Get(id)
	}
	return cas.Object{}, fmt.Errorf("object %s: %w", id, cas.ErrNotFound)
}

// genAudit checks the reported generations against the history.
func genAudit(hist []remote.IncrementV4, ids []reported, gen0, gen uint64) GenAudit {
	a := GenAudit{Reported: len(ids), Added: gen - gen0}
	byGen := map[uint64]string{}
	seen := map[string]bool{}
	for _, inc := range hist {
		byGen[inc.Generation] = inc.Publication
		if seen[inc.Publication] {
			a.DuplicateID++
		}
		seen[inc.Publication] = true
	}
	told := map[uint64]bool{}
	for _, r := range ids {
		if !told[r.gen] {
			a.Distinct++
		}
		told[r.gen] = true
		if r.gen <= gen0 || byGen[r.gen] != r.id {
			a.WrongID++
		}
	}
	return a
}
