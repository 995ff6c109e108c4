package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/slivingdoc/slivingdoc/bench"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// Config sizes one simulated run. Durations are in the model's time.
type Config struct {
	Agents  int
	Windows int           // commits per agent: one at a random instant of each window (0 = 1)
	Window  time.Duration // one window (0 = 1 minute): Agents/Window is the offered rate
	Burst   bool          // every agent commits at the start of each window instead
	Model   Model
	Seed    uint64
	Payload int // untagged bytes after each tagged line (0 = 960: ~1 KB per commit)
	// MaxTries is the Commit calls an agent spends on one commit before
	// it gives up (0 = 20, as bench/loadgen's actors).
	MaxTries int
	// Dir is the parent of the run's L and P directories (default: the
	// temporary directory). Every agent materialises every agent's file:
	// 1,000 agents leave 10^6 files, about 4 GB at one block each, and
	// on a tmpfs (/dev/shm) that is memory.
	Dir string
	// EnginePerCommit gives every Commit call a fresh engine, closed after
	// it, as the CLI does (one process per call); otherwise each agent
	// keeps one engine for the run, as `slivingdoc serve` does. Kept
	// engines share half the open-file limit for cached pack files.
	EnginePerCommit bool
	Cap             time.Duration // no new Commit call starts this long after the last instant (0 = 10 minutes)
	Progress        func(format string, args ...any)
	// Engine picks what commits: EngineServer (server.Engine, the
	// default) or EnginePublish (agents calling the format-v4 protocol of
	// package publish directly; v4agent.go).
	Engine string
	// Warmup (publish mode): commits whose instant falls in the run's
	// first Warmup are not measured (latency, rate), nor are the requests
	// made before it.
	Warmup time.Duration
	// TraceSlow (publish mode): keep the protocol's trace of the first
	// commit slower than this (0: none).
	TraceSlow time.Duration
	// Breakdown (publish mode): where the measured commits' time went
	// (Result.Breakdown), for all of them and for those slower than
	// this (0: not computed).
	Breakdown time.Duration
	// CatchUp (publish mode): CatchUpFull (default) or CatchUpLazy.
	CatchUp string
	// Gather (publish mode, diagnosis only): publish.Options.Gather
	// instead of publish's default, to test an explanation of a figure.
	Gather time.Duration
	// FoldParallel (publish mode, diagnosis only): publish.Options.Parallel,
	// the proposals a fold reads at once, instead of publish's default.
	FoldParallel int

	clock modelClock // the engines' publication clock (set by Run)
}

func (c *Config) defaults() {
	if c.Windows <= 0 {
		c.Windows = 1
	}
	if c.Window <= 0 {
		c.Window = time.Minute
	}
	if c.Payload <= 0 {
		c.Payload = 960
	}
	if c.MaxTries <= 0 {
		c.MaxTries = 20
	}
	if c.Cap <= 0 {
		c.Cap = 10 * time.Minute
	}
	if c.Model.Scale <= 0 {
		c.Model.Scale = 1
	}
	if c.Progress == nil {
		c.Progress = func(string, ...any) {}
	}
}

// Result is what one run measured. Durations are in the model's time
// unless named Real.
type Result struct {
	Agents          int
	Windows         int
	Window          time.Duration
	Burst           bool
	EnginePerCommit bool
	Model           Model
	Seed            uint64
	Offered         int     // commits the agents set out to make
	OfferedPerSec   float64 // Offered over the windows
	Accepted        int     // commits reported OK to the agents
	Busy            int     // REMOTE_BUSY results
	GaveUp          int     // commits abandoned after MaxTries calls or at the cap
	Other           map[string]int
	OtherCause      map[string]string // the first cause seen of each Other key (for diagnosis)
	Calls           int               // Engine.Commit calls
	Generations     uint64            // generations the run added
	// Elapsed runs from the first instant to the last accepted commit;
	// CommitsPerSec is Accepted over it.
	Elapsed       time.Duration
	CommitsPerSec float64
	Counts        Counts      // store traffic of the run (set-up and audit excluded)
	Latency       Percentiles // accepted commits: the agent's instant to OK, its retries included
	CallLatency   Percentiles // every Commit call
	Real          time.Duration
	SetupReal     time.Duration
	CPU           time.Duration // of this process during the run (0 where not measured)
	// Load is the machine's 1-minute load average at the start and end of
	// the run (Linux; nil elsewhere): the simulation shares the cores.
	Load []float64
	// FileLimit is the open-file limit the run had (0 = unknown): an
	// engine keeps up to 64 cached pack files open, and the engines of a
	// process share half the limit for them (cas/store_files.go).
	FileLimit uint64
	Audit     Audit
	// S3DollarsPerMillion is what the run's requests would cost at S3
	// Standard request prices, per million accepted commits
	// (Counts.S3Dollars over Accepted).
	S3DollarsPerMillion float64

	// The publish mode's (Config.Engine == EnginePublish):
	Engine string
	Warmup time.Duration
	// MeasuredAccepted is the commits accepted after the warm-up (all
	// of them without one): the requests are per measured commit.
	MeasuredAccepted int
	// CatchUp is the part of Counts that catching up made (GETs of the
	// proposals, group packs and segments a newer `current` names); the
	// rest is the publication path's.
	CatchUp Counts
	// Versions is the changes the agents built: one per commit, one more
	// for each decline or version that fell out of the window.
	Versions int
	// CatchUpPolicy is Config.CatchUp.
	CatchUpPolicy string
	GenAudit      GenAudit
	SlowTrace     []string
	Breakdown     *Breakdown `json:",omitempty"`
}

// CoresBusy is the simulation's CPU over the run's real time.
func (r *Result) CoresBusy() float64 {
	if r.Real <= 0 {
		return 0
	}
	return float64(r.CPU) / float64(r.Real)
}

// CommitsPerConditional is accepted commits per won conditional write of
// `current` (1 when every commit publishes alone).
func (r *Result) CommitsPerConditional() float64 {
	if r.Counts.WonCurrent == 0 {
		return 0
	}
	return float64(r.Accepted) / float64(r.Counts.WonCurrent)
}

// PerCommit is n per accepted commit.
func (r *Result) PerCommit(n int64) float64 {
	d := r.Accepted
	if r.MeasuredAccepted > 0 {
		d = r.MeasuredAccepted
	}
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// packHandlesPerEngine is the most pack files one engine's object cache
// keeps open (cas/store_files.go).
const packHandlesPerEngine = 64

type agent struct {
	tag  string
	e    *server.Engine // the kept engine; nil with Config.EnginePerCommit
	base string         // parent of the agent's L and P
	path string         // the agent's file, absolute
	cfg  Config         // the engines' settings (Config.EnginePerCommit)
	seq  int

	pending, accepted, written []string
	ok, busy, gaveUp, calls    int
	other                      map[string]int
	cause                      map[string]string
	latency, callLatency       []time.Duration // real time
}

// Run simulates one fleet and audits the notebook it leaves.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.defaults()
	if cfg.Agents <= 0 || cfg.Agents > 9999 {
		return nil, fmt.Errorf("fleetsim: agents must be 1..9999, got %d", cfg.Agents)
	}
	switch cfg.Engine {
	case EngineServer:
	case EnginePublish:
		return runV4(ctx, cfg)
	default:
		return nil, fmt.Errorf("fleetsim: unknown engine %q", cfg.Engine)
	}
	base, err := os.MkdirTemp(cfg.Dir, "fleetsim-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(base)

	// Up to 64 cached pack handles per engine, plus the lock files and
	// writes of the calls in flight; past the limit the engines' stores
	// share half of it for cached handles (cas/store_files.go) and read
	// the rest with handles of their own.
	limit := raiseFileLimit(uint64(cfg.Agents)*(packHandlesPerEngine+8) + 1024)
	cfg.clock = modelClock{scale: cfg.Model.Scale, t0: time.Now()}
	mem := memstore.New()
	store := NewLatency(mem, cfg.Model, cfg.Seed)
	res := &Result{FileLimit: limit, Agents: cfg.Agents, Windows: cfg.Windows, Window: cfg.Window, Burst: cfg.Burst, EnginePerCommit: cfg.EnginePerCommit, Model: store.model, Seed: cfg.Seed, Other: map[string]int{}, OtherCause: map[string]string{}}

	setup0 := time.Now()
	agents, gen0, err := setup(ctx, cfg, store, base)
	defer func() {
		for _, a := range agents {
			if a != nil && a.e != nil {
				a.e.Close()
			}
		}
	}()
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
		for {
			select {
			case <-done:
				return
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
				if err := a.edit(cfg.Payload); err != nil {
					errs[i] = err
					return
				}
				ok, err := a.commit(ctx, store, deadline, cfg.MaxTries)
				if err != nil {
					errs[i] = err
					return
				}
				if ok {
					now := time.Now()
					a.latency = append(a.latency, now.Sub(at))
					accepted.Add(1)
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
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	var lat, calls []time.Duration
	var acceptedLines, written []string
	for _, a := range agents {
		res.Accepted += a.ok
		res.Busy += a.busy
		res.GaveUp += a.gaveUp
		res.Calls += a.calls
		for k, v := range a.other {
			res.Other[k] += v
		}
		for k, v := range a.cause {
			if _, seen := res.OtherCause[k]; !seen {
				res.OtherCause[k] = v
			}
		}
		for _, d := range a.latency {
			lat = append(lat, model(d))
		}
		for _, d := range a.callLatency {
			calls = append(calls, model(d))
		}
		acceptedLines = append(acceptedLines, a.accepted...)
		written = append(written, a.written...)
	}
	res.Offered = cfg.Agents * cfg.Windows
	res.OfferedPerSec = float64(res.Offered) / (time.Duration(cfg.Windows) * cfg.Window).Seconds()
	res.Elapsed = model(time.Duration(lastOK.Load()))
	if res.Elapsed > 0 {
		res.CommitsPerSec = float64(res.Accepted) / res.Elapsed.Seconds()
	}
	res.Latency, res.CallLatency = percentiles(lat), percentiles(calls)
	res.S3DollarsPerMillion = bench.S3DollarsPerMillion(res.Counts.S3Dollars(), res.Accepted)

	gen, audit, err := auditNotebook(ctx, mem, filepath.Join(base, "audit"), acceptedLines, written)
	if err != nil {
		return nil, fmt.Errorf("fleetsim: audit: %w", err)
	}
	res.Generations, res.Audit = gen-gen0, audit
	return res, nil
}

// schedule returns each window's instant per agent, from the window's
// start of the run: seeded, independent and uniform over the window (all
// at its start for a burst).
func schedule(cfg Config) [][]time.Duration {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Agents)))
	out := make([][]time.Duration, cfg.Windows)
	for w := range out {
		out[w] = make([]time.Duration, cfg.Agents)
		for i := range out[w] {
			off := time.Duration(0)
			if !cfg.Burst {
				off = time.Duration(rng.Int64N(int64(cfg.Window)))
			}
			out[w][i] = time.Duration(w)*cfg.Window + off
		}
	}
	return out
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newEngine is one agent's engine: L at base/notes, P at base/private.
func newEngine(store remote.Store, base string, cfg Config) (*server.Engine, string, error) {
	dir := filepath.Join(base, "notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	sc := server.Config{Store: store, PrivateRoot: filepath.Join(base, "private"), WorkspaceRoot: dir}
	if cfg.clock.scale > 0 && cfg.clock.scale != 1 {
		sc.Sleep, sc.Now = cfg.clock.sleep, cfg.clock.now
	}
	e, err := server.New(sc)
	return e, dir, err
}

// setup commits one file per agent from a seed engine and gives every
// agent its engine, pulled. The store's latency is off: set-up is not
// measured. It returns the generation after set-up.
func setup(ctx context.Context, cfg Config, store remote.Store, base string) ([]*agent, uint64, error) {
	seed, dir, err := newEngine(store, filepath.Join(base, "seed"), cfg)
	if err != nil {
		return nil, 0, err
	}
	defer seed.Close()
	if _, err := seed.Pull(ctx, ""); err != nil {
		return nil, 0, fmt.Errorf("seed pull: %w", err)
	}
	agents := make([]*agent, cfg.Agents)
	for i := range agents {
		tag := fmt.Sprintf("a%04d", i)
		if err := os.WriteFile(filepath.Join(dir, tag+".md"), []byte("# "+tag+"\n"), 0o644); err != nil {
			return nil, 0, err
		}
		agents[i] = &agent{tag: tag, cfg: cfg, other: map[string]int{}, cause: map[string]string{}}
	}
	r, err := seed.Commit(ctx, "", "set-up")
	if err != nil {
		return agents, 0, fmt.Errorf("seed commit: %w", err)
	}
	err = parallel(len(agents), 2*runtime.GOMAXPROCS(0), func(i int) error {
		a := agents[i]
		a.base = filepath.Join(base, a.tag)
		e, dir, err := newEngine(store, a.base, cfg)
		if err != nil {
			return err
		}
		a.path = filepath.Join(dir, a.tag+".md")
		if _, err := e.Pull(ctx, ""); err != nil {
			e.Close()
			return fmt.Errorf("%s: pull: %w", a.tag, err)
		}
		if cfg.EnginePerCommit {
			return e.Close()
		}
		a.e = e
		return nil
	})
	return agents, r.Generation, err
}

// edit appends the agent's next tagged line and payload to its file.
func (a *agent) edit(payload int) error {
	line := fmt.Sprintf("%s-c%03d %s", a.tag, a.seq, strings.TrimSpace(string(bench.NoteText(a.seq*10007+len(a.written), 48))))
	line = strings.ReplaceAll(line, "\n", " ")
	block := line + "\n" + string(bench.NoteText(a.seq*131+int(a.tag[4]), payload))
	a.seq++
	f, err := os.OpenFile(a.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(block); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	a.pending = append(a.pending, line)
	a.written = append(a.written, line)
	return nil
}

// commit calls Commit until it is accepted, as an agent does: REMOTE_BUSY
// and other retryable errors are tried again at once, up to maxTries
// calls; no call starts after deadline. Calls already running are never
// cancelled, so every accepted commit is known to the audit. A
// non-retryable domain error ends the run: on disjoint files there
// should be none.
func (a *agent) commit(ctx context.Context, store remote.Store, deadline time.Time, maxTries int) (bool, error) {
	for try := 1; ; try++ {
		if time.Now().After(deadline) {
			a.gaveUp++
			return false, nil
		}
		t := time.Now()
		err := a.commitOnce(ctx, store)
		a.calls++
		a.callLatency = append(a.callLatency, time.Since(t))
		if err == nil {
			a.ok++
			a.accepted = append(a.accepted, a.pending...)
			a.pending = nil
			return true, nil
		}
		var se *diag.Error
		if !errors.As(err, &se) {
			return false, fmt.Errorf("%s: commit: %w", a.tag, err)
		}
		switch {
		case se.Code == diag.CodeRemoteBusy:
			a.busy++
		case se.Retryable:
			k := string(se.Code) + " · " + se.Reason
			a.other[k]++
			if _, seen := a.cause[k]; !seen && se.Cause != nil {
				a.cause[k] = se.Cause.Error()
			}
		default:
			return false, fmt.Errorf("%s: commit: %s · %s: %v", a.tag, se.Code, se.Reason, err)
		}
		if try >= maxTries {
			a.gaveUp++
			return false, nil
		}
	}
}

// commitOnce is one Commit call, on a fresh engine when the agent keeps
// none (its construction and close are part of the call, as in a CLI
// process).
func (a *agent) commitOnce(ctx context.Context, store remote.Store) error {
	e := a.e
	if e == nil {
		var err error
		if e, _, err = newEngine(store, a.base, a.cfg); err != nil {
			return err
		}
		defer e.Close()
	}
	_, err := e.Commit(ctx, "", a.tag+" note")
	return err
}

// auditNotebook pulls the final notebook with a fresh engine into dir and
// checks every tagged line; it returns the final generation too.
func auditNotebook(ctx context.Context, store remote.Store, dir string, accepted, written []string) (uint64, Audit, error) {
	e, l, err := newEngine(store, dir, Config{})
	if err != nil {
		return 0, Audit{}, err
	}
	defer e.Close()
	r, err := e.Pull(ctx, "")
	if err != nil {
		return 0, Audit{}, err
	}
	tree, err := readTree(l)
	if err != nil {
		return 0, Audit{}, err
	}
	return r.Generation, checkLines(tree, accepted, written), nil
}

// parallel runs f(0..n-1), k at a time, and returns the first error.
func parallel(n, k int, f func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(k)
	for i := range n {
		g.Go(func() error { return f(i) })
	}
	return g.Wait()
}
