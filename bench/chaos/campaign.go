//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/bench"
	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

// campaign is the run against one store: its writers, its faults, its
// figures.
type campaign struct {
	cfg    config
	store  string // "file" or "seaweedfs"
	stream uint64 // random stream of this store (schedule and writers)
	work   string
	env    []string // selects the store; writers add their private root

	srv   *seaweed.Server // seaweedfs only
	tb    *bench.ProgramTB
	proxy *faultProxy
	disk  *smallDisk // nil when the host refuses a tmpfs

	kinds   []faultKind
	writers []*writer
	st      *stats
	fpBin   string // the failpoints build (kill-at-failpoint, kill-twice)
	fpNext  int    // the next failpoint in turn
	dblNext int    // the next pair of failpoints in turn (kill-twice)
	// logCommits counts accepted commits holding a log-file line (the
	// pause of a kill-twice waits for one)
	logCommits atomic.Int64

	mu      sync.Mutex
	outages []window // intervals the store was down, for the outage rule

	v4store remote.Store // format 4: the store, opened by the seed (checkV4)
}

type window struct{ from, to time.Time }

func newCampaign(cfg config, store string, stream uint64) *campaign {
	return &campaign{cfg: cfg, store: store, stream: stream,
		work: filepath.Join(cfg.work, store), st: newStats(store)}
}

// setup starts the store (and proxy), mounts the small disk, and decides
// which fault kinds this store gets.
func (c *campaign) setup() error {
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		return err
	}
	c.kinds = []faultKind{faultKill}
	if c.cfg.fpBin != "" {
		c.fpBin = c.cfg.fpBin
		c.kinds = append(c.kinds, faultFailpoint, faultDouble)
	}
	switch c.store {
	case "file":
		c.env = []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(filepath.Join(c.work, "store"))}
	case "seaweedfs":
		c.tb = &bench.ProgramTB{LogPrefix: "seaweed: "}
		start := time.Now()
		if err := bench.SeaweedCall(func() { c.srv = seaweed.Start(c.tb) }); err != nil {
			return fmt.Errorf("start SeaweedFS: %w", err)
		}
		c.st.note("SeaweedFS started in %s", time.Since(start).Round(100*time.Millisecond))
		target := c.srv.Endpoint[len("http://"):]
		p, err := newFaultProxy(target)
		if err != nil {
			return err
		}
		c.proxy = p
		c.env = append(c.srv.Env(),
			"AWS_ENDPOINT_URL_S3="+p.URL(), // later entries win: writers go through the proxy
			"SLIVINGDOC_BUCKET="+c.srv.Bucket,
			"SLIVINGDOC_PREFIX="+c.prefix(),
			"SLIVINGDOC_PATH_STYLE=true",
			"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull)
		c.kinds = append(c.kinds, faultOutage, faultFreeze, faultSlow)
	default:
		return fmt.Errorf("unknown store %q (file, seaweedfs)", c.store)
	}
	d, err := mountSmallDisk(filepath.Join(c.work, "disk"), c.cfg.diskMB)
	if err != nil {
		c.st.note("disk-full left out: this host refuses a tmpfs (%v)", err)
	} else {
		c.disk = d
		c.kinds = append(c.kinds, faultDisk)
	}
	c.kinds = append(c.kinds, faultCorrupt)
	home := filepath.Join(c.work, "home")
	c.env = append(c.env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"PATH="+os.Getenv("PATH"), "NO_COLOR=1", "LOG_LEVEL=error")
	c.env = append(c.env, c.cfg.engineSettings()...)
	return nil
}

// engineSettings are the engine settings every process of the campaign
// runs with, as the CLI's environment settings.
func (cfg config) engineSettings() []string {
	return []string{"SLIVINGDOC_CHECKPOINT_PACKS=" + strconv.Itoa(cfg.checkpointPacks)}
}

// teardown stops whatever setup started.
func (c *campaign) teardown() {
	if c.proxy != nil {
		c.proxy.Close()
	}
	if c.tb != nil {
		c.tb.Close()
	}
	if c.disk != nil {
		if err := c.disk.unmount(); err != nil {
			c.st.note("%v", err)
		}
	}
}

// procEnv is the environment of a process using private root priv.
func (c *campaign) procEnv(priv string) []string {
	return append(slices.Clip(c.env), "SLIVINGDOC_PRIVATE_ROOT="+priv)
}

// run is the whole campaign: seed the notebook, start the writers, inject
// the scheduled faults, stop, settle, and check.
func (c *campaign) run() error {
	if err := c.setup(); err != nil {
		return err
	}
	defer c.teardown()
	if err := c.seedNotebook(); err != nil {
		return err
	}
	for i := range c.cfg.writers {
		w, err := c.newWriter(i)
		if err != nil {
			return err
		}
		defer w.journal.Close()
		c.writers = append(c.writers, w)
	}
	for _, w := range c.writers {
		if !c.untilOK(w, "pull") {
			return fmt.Errorf("writer %d: first pull never succeeded", w.id)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, w := range c.writers {
		wg.Go(func() { c.loop(ctx, w) })
	}
	wg.Go(func() { c.observe(ctx, time.Second) })
	diskWriter := 0
	events := schedule(c.cfg.seed, c.stream, c.kinds, c.cfg.rounds, c.cfg.writers, diskWriter)
	c.st.start = time.Now()
	deadline := c.st.start.Add(c.cfg.duration)
	for i, ev := range events {
		// The time cap never cuts the first len(kinds) events: every kind fires.
		if i >= len(c.kinds) && c.cfg.duration > 0 && time.Now().After(deadline) {
			break
		}
		time.Sleep(ev.Gap)
		fired, err := c.inject(ctx, ev)
		if err != nil {
			cancel()
			wg.Wait()
			return fmt.Errorf("round %d (%s): %w", ev.Round, ev.Kind, err)
		}
		c.st.event(ev, fired)
		if ev.Round%50 == 0 {
			fmt.Printf("chaos: %s: %d events in %s\n", c.store, ev.Round, time.Since(c.st.start).Round(time.Second))
		}
	}
	c.st.faultPhase = time.Since(c.st.start)
	cancel()
	wg.Wait()
	if err := c.check(); err != nil {
		return err
	}
	return c.checkV4()
}

// checkV4 (format 4) requires the store's `current` to be of version 4
// after the campaign: a process that published by version 3 onto it
// would have dropped what keeps version-4 acceptance exactly-once.
func (c *campaign) checkV4() error {
	if c.v4store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.opBound)
	defer cancel()
	cur, _, err := c.v4store.Get(ctx, remote.CurrentKey)
	if err != nil {
		return fmt.Errorf("read current: %w", err)
	}
	if v := remote.ManifestVersionOf(cur); v != 4 {
		c.st.fail("format 4: the store's current is of version %d after the campaign", v)
	}
	return nil
}

// seedNotebook publishes the initial tree from a directory of its own:
// by the binary, or (format 4) by an engine of this program that
// publishes by version 4, straight to the store (not through the fault
// proxy: no fault is scheduled yet).
func (c *campaign) seedNotebook() error {
	if c.cfg.format == 4 {
		return c.seedV4()
	}
	dir := filepath.Join(c.work, "seed")
	w := &writer{id: -1, dir: dir, priv: filepath.Join(c.work, "seed-priv"), started: make(chan struct{}, 1)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !c.untilOK(w, "pull") {
		return errors.New("seed: pull never succeeded")
	}
	for name, content := range initialTree(c.cfg.writers) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	if !c.untilOK(w, "commit", "-m", "chaos: initial notebook") {
		return errors.New("seed: commit never succeeded")
	}
	return nil
}

// seedV4 is seedNotebook at format 4.
func (c *campaign) seedV4() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.opBound)
	defer cancel()
	var store remote.Store
	var err error
	switch c.store {
	case "file":
		store, err = filestore.New(filepath.Join(c.work, "store"))
	case "seaweedfs":
		store, err = s3store.New(ctx, s3store.Config{Bucket: c.srv.Bucket, Prefix: c.prefix(), Region: c.srv.Region,
			Endpoint: c.srv.Endpoint, PathStyle: true, AccessKeyID: c.srv.AccessKey, SecretAccessKey: c.srv.SecretKey})
	}
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	for name, content := range initialTree(c.cfg.writers) {
		files[name] = []byte(content)
	}
	gen, err := bench.SeedV4(ctx, store, filepath.Join(c.work, "seed-v4"), files, "chaos: initial notebook")
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	c.v4store = store
	c.st.note("format 4: the notebook was seeded by a version-4 commit (generation %d); every process published by version 4", gen)
	return nil
}

// prefix is the SeaweedFS key prefix of the campaign's notebook.
func (c *campaign) prefix() string { return fmt.Sprintf("chaos-%d", c.cfg.seed) }

func (c *campaign) newWriter(i int) (*writer, error) {
	base := filepath.Join(c.work, fmt.Sprintf("w%02d", i))
	w := &writer{
		id:      i,
		dir:     filepath.Join(base, "notebook"),
		priv:    filepath.Join(base, "private"),
		tag:     fmt.Sprintf("chaos-%d-%s-w%02d", c.cfg.seed, c.store, i),
		rng:     rand.New(rand.NewPCG(c.cfg.seed, c.stream<<8|uint64(i+1))),
		started: make(chan struct{}, 1),
	}
	if i == 0 && c.disk != nil {
		w.priv = filepath.Join(c.disk.dir, "private")
	}
	for _, d := range []string{w.dir, w.priv} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	j, err := os.OpenFile(filepath.Join(base, "journal"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	w.journal = j
	return w, nil
}

// exec runs one operation of w and records it; an armed writer runs the
// failpoints build, and its death there counts as the campaign's kill.
func (c *campaign) exec(w *writer, args ...string) opResult {
	bin, extra, point := c.takeArm(w)
	onStart := w.setProc
	if point != "" {
		onStart = func(p *proc) {
			if p != nil {
				p.killed.Store(true)
			}
			w.setProc(p)
		}
	}
	res := runProc(bin, w.dir, append(c.procEnv(w.priv), extra...), c.cfg.opBound, onStart, args...)
	res.Writer = w.id
	c.st.op(res)
	w.armDone(point, res)
	return res
}

// untilOK repeats an operation (outside the fault phase) until it
// succeeds, a bounded number of times.
func (c *campaign) untilOK(w *writer, args ...string) bool {
	for attempt := range 20 {
		res := c.exec(w, args...)
		if res.Outcome == outOK {
			if args[0] == "commit" && w.journal != nil {
				if err := w.accepted(res.Generation); err != nil {
					c.st.fail("writer %d: journal: %v", w.id, err)
				}
			}
			return true
		}
		if res.Outcome == outDomain && res.Report.Action == "EDIT_FILES" {
			c.resolve(w)
		}
		if res.Outcome == outDomain && res.Report.Reason == "BASELINE_LOST" {
			if err := c.leaveLostBaseline(w); err != nil {
				c.st.fail("writer %d: the way out of BASELINE_LOST: %v", w.id, err)
			}
		}
		time.Sleep(time.Duration(100*(attempt+1)) * time.Millisecond)
	}
	return false
}

// loop is a writer at work during the fault phase.
func (c *campaign) loop(ctx context.Context, w *writer) {
	integrity := 0  // consecutive STORAGE_INTEGRITY results
	prev := "start" // how the previous operation ended, for conflict notes
	for ctx.Err() == nil {
		op := "commit"
		w.mu.Lock()
		// after-publish needs a commit; so does every stage of a kill-twice.
		mustCommit := w.armed == "after-publish" || w.dbl != nil
		w.mu.Unlock()
		if w.rng.IntN(100) < 15 && !mustCommit {
			op = "pull"
		}
		args := []string{op}
		if op == "commit" {
			if w.pending < 40 { // a writer cut off for long stops piling up edits
				if _, err := w.edit(); err != nil {
					c.st.fail("writer %d: edit: %v", w.id, err)
					return
				}
			}
			args = append(args, "-m", fmt.Sprintf("w%02d edit %d", w.id, w.seq))
		}
		c.pauseAfterKill(ctx, w)
		before, _ := snapshot(w.dir)
		privBefore := privState(w)
		w.mu.Lock()
		armed := w.armed
		w.mu.Unlock()
		res := c.exec(w, args...)
		w.remember(fmt.Sprintf("%s %s (armed %q) pending shared=%d own=%d log=%d cause=%q", opLine(res), args, armed, w.sharedPending, w.ownPending, w.logPending, res.Cause))
		if err := w.record(opLine(res)); err != nil {
			c.st.fail("writer %d: journal: %v", w.id, err)
			return
		}
		c.watchDuplicates(w, before, res, prev)
		switch res.Outcome {
		case outOK:
			integrity = 0
			if op == "commit" {
				if w.logPending > 0 {
					c.logCommits.Add(1)
				}
				if err := w.accepted(res.Generation); err != nil {
					c.st.fail("writer %d: journal: %v", w.id, err)
					return
				}
			}
		case outDomain:
			switch res.Report.Action {
			case "EDIT_FILES":
				c.st.conflictAfter(fmt.Sprintf("%s·%s on %s after %s", res.Report.Code, res.Report.Reason, op, prev))
				if c.auditConflict(w, res) {
					if dir := c.keepForeign(w, before, privBefore, res); dir != "" {
						c.st.note("writer %d: foreign conflict case kept in %s", w.id, dir)
					}
				}
				c.resolve(w)
			case "CHECK_HOST":
				if res.Report.Reason == "BASELINE_LOST" {
					c.st.note("writer %d: BASELINE_LOST; took the documented way out", w.id)
					if err := c.leaveLostBaseline(w); err != nil {
						c.st.fail("writer %d: the way out of BASELINE_LOST: %v", w.id, err)
						return
					}
				}
			case "RUN_VERIFY":
				integrity++
				if integrity >= 3 {
					// The engine did not heal its cache by itself; do what an
					// operator would, and count it.
					c.st.cacheReset(w.id, res.Report.Reason)
					_ = os.RemoveAll(filepath.Join(w.priv, "stores"))
					integrity = 0
				}
			}
			if res.Report.Retryable {
				time.Sleep(time.Duration(200+w.rng.IntN(500)) * time.Millisecond) // an agent told RETRY waits a moment
			}
		}
		prev = fmt.Sprintf("%s %s", op, res.Outcome)
		if res.Outcome == outDomain {
			prev += " " + res.Report.Code + "·" + res.Report.Reason
		}
	}
}

// watchDuplicates looks for a token line that L holds twice, right after
// each operation: a duplicate is a merge gone wrong, and the operation
// that made it is the one to debug. The first time, L before and after is
// kept in the work directory.
func (c *campaign) watchDuplicates(w *writer, before map[string][]byte, res opResult, prev string) {
	if w.dupSeen {
		return
	}
	n, err := countTokens(w.dir)
	if err != nil {
		return
	}
	for tok, k := range n {
		if k < 2 {
			continue
		}
		w.dupSeen = true
		dir := filepath.Join(c.work, fmt.Sprintf("w%02d-duplicate", w.id))
		after, _ := snapshot(w.dir)
		saveSnapshot(filepath.Join(dir, "before"), before)
		saveSnapshot(filepath.Join(dir, "after"), after)
		c.st.note("writer %d: %s is in its directory %d times right after %s (%s), previous operation %s; L before and after kept in %s",
			w.id, tok, k, res.Op, describe(res), prev, dir)
		return
	}
}

func describe(r opResult) string {
	if r.Outcome == outDomain {
		return fmt.Sprintf("%s %s·%s", r.Outcome, r.Report.Code, r.Report.Reason)
	}
	return string(r.Outcome)
}

// opLine is the journal record of one operation, for reading a failed
// run's history.
func opLine(r opResult) string {
	return fmt.Sprintf("OP %s %s gen=%d ms=%d", r.Op, strings.ReplaceAll(describe(r), " ", "/"), r.Generation, r.Duration().Milliseconds())
}

// snapshot reads every file of dir.
func snapshot(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := eachFile(dir, func(p string, data []byte) error {
		rel, _ := filepath.Rel(dir, p)
		files[rel] = data
		return nil
	})
	return files, err
}

func saveSnapshot(dir string, files map[string][]byte) {
	for rel, data := range files {
		p := filepath.Join(dir, rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, data, 0o644)
	}
}

func (c *campaign) resolve(w *writer) {
	before, _ := snapshot(w.dir)
	defer c.watchDuplicates(w, before, opResult{Op: "conflict resolution", Outcome: outOK}, "a conflict")
	n, err := resolveMarkers(w.dir)
	if err != nil {
		c.st.fail("writer %d: resolve conflict blocks: %v", w.id, err)
	}
	c.st.conflicts(n)
}

// inject performs one fault and reports whether it demonstrably fired.
// An error means the campaign itself cannot go on (the store would not
// come back, the disk cannot be freed).
func (c *campaign) inject(ctx context.Context, ev event) (bool, error) {
	switch ev.Kind {
	case faultKill:
		return c.writers[ev.Target].kill(ctx, ev.Aim, 20*time.Second), nil

	case faultFailpoint:
		point := failpointsInTurn[c.fpNext%len(failpointsInTurn)]
		c.fpNext++
		return c.armFailpoint(ctx, c.writers[ev.Target], point, 30*time.Second), nil

	case faultDouble:
		pair := doublesInTurn[c.dblNext%len(doublesInTurn)]
		c.dblNext++
		return c.armDouble(ctx, c.writers[ev.Target], pair, 60*time.Second), nil

	case faultOutage:
		from := time.Now()
		c.proxy.Down()
		stop := c.srv.Stop
		if ev.Crash {
			stop = c.srv.Kill
		}
		if err := bench.SeaweedCall(func() { stop(c.tb) }); err != nil {
			return false, err
		}
		time.Sleep(ev.Length)
		if err := bench.SeaweedCall(func() { c.srv.Restart(c.tb) }); err != nil {
			return false, err
		}
		to := time.Now()
		if err := c.proxy.Up(); err != nil {
			return false, err
		}
		c.mu.Lock()
		c.outages = append(c.outages, window{from, to})
		c.mu.Unlock()
		return true, nil

	case faultFreeze:
		// The server still accepts connections (the kernel does) but
		// answers nothing: requests hang until the client gives up. No
		// operation may outlast the bound, and one that ran entirely in
		// the freeze must fail as an outage does.
		from := time.Now()
		if err := bench.SeaweedCall(func() { c.srv.Pause(c.tb) }); err != nil {
			return false, err
		}
		time.Sleep(ev.Length)
		if err := bench.SeaweedCall(func() { c.srv.Resume(c.tb) }); err != nil {
			return false, err
		}
		c.mu.Lock()
		c.outages = append(c.outages, window{from, time.Now()})
		c.mu.Unlock()
		return true, nil

	case faultSlow:
		before := c.proxy.Delayed()
		c.proxy.SetSlow(ev.Aim)
		time.Sleep(ev.Length)
		c.proxy.SetSlow(0)
		return c.proxy.Delayed() > before, nil

	case faultDisk:
		w := c.writers[ev.Target]
		if err := c.disk.fill(); err != nil {
			_ = c.disk.free()
			return false, fmt.Errorf("fill the small disk: %w", err)
		}
		// Keep it full for the fault's length, and at least until one
		// operation of the writer started and ended on the full disk.
		end := time.Now().Add(ev.Length)
		ops := c.st.opsOf(w.id)
		for time.Now().Before(end) || c.st.opsOf(w.id) < ops+2 {
			if time.Since(end) > 30*time.Second {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := c.disk.free(); err != nil {
			return false, fmt.Errorf("free the small disk: %w", err)
		}
		return c.st.opsOf(w.id) >= ops+2, nil

	case faultCorrupt:
		// A writer whose cache was just reset has no pack yet: the next
		// writer in order takes the fault instead.
		rng := rand.New(rand.NewPCG(c.cfg.seed, uint64(ev.Round)))
		for i := range c.writers {
			fired, err := corruptPack(c.writers[(ev.Target+i)%len(c.writers)].priv, rng)
			if fired || err != nil {
				return fired, err
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("unknown fault %q", ev.Kind)
}
