package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/slivingdoc/slivingdoc/bench"
)

// ContentionResult is N writers committing at once: each its own directory
// (and a private root shared by all or its own: PrivateRoots), commitsEach commits, on disjoint files or on one shared
// file (all appending at its end, or each writer in its own section).
type ContentionResult struct {
	Store             string
	Mode              string // modeDisjoint, modeShared or modeSections
	Driver            string `json:",omitempty"` // driverCLI ("" in older results) or driverServe
	Format            int    `json:",omitempty"` // the store's format version (0 in older results: 3)
	PrivateRoots      string `json:",omitempty"` // rootsShared or rootsOwn ("" in older results: own)
	Unproxied         bool   `json:",omitempty"` // -unproxied: no request counts
	Writers           int
	CommitsEach       int
	Accepted          int // commits reported OK to the writers
	Generations       uint64
	Wall              time.Duration // start to the last accepted commit
	CommitsPerSec     float64
	Attempts          int // publication attempts: increment packs, registrations or (format 4) proposals uploaded
	AttemptsPerCommit float64
	Busy              int
	Conflicts         int
	Other             map[string]int
	Unfinished        []string      // writers that stopped early, with the reason
	Commit            OpStats       // accepted commit processes
	Processes         int           // every commit process started
	CPU               time.Duration // user+system of all commit processes
	Check             LineCheck
	// Requests is the traffic of the run (SeaweedFS: writers go through
	// the counting proxy): lost races show as 412s of "PUT if-match current".
	Requests []OpCount
	// S3DollarsPerMillion is what Requests would cost at S3 Standard
	// request prices per million accepted commits (0 without Requests).
	S3DollarsPerMillion float64
	// Budget is the CPU each party spent in the run's window.
	Budget Budget `json:",omitempty"`

	loc string // the notebook's location (tests read the store after a run)
}

const (
	modeDisjoint = "disjoint"
	modeShared   = "shared"          // every writer appends at the end of one file
	modeSections = "shared-sections" // every writer inserts into its own section of one file
)

// maxTriesPerCommit bounds the processes one writer spends on one commit.
const maxTriesPerCommit = 20

func (r *runner) contention(ctx context.Context, st *storeTarget, mode string, writers int) (ContentionResult, error) {
	return r.contentionBy(ctx, st, mode, writers, driverCLI, 4)
}

// contentionBy is contention with the writers' calls made by driver, on a
// store of format version 3 or 4 (setupActors).
func (r *runner) contentionBy(ctx context.Context, st *storeTarget, mode string, writers int, driver string, format int) (ContentionResult, error) {
	res := ContentionResult{Store: st.name, Mode: mode, Driver: driver, Format: format, PrivateRoots: r.rootsSetting(), Unproxied: r.prof.unproxied, Writers: writers, CommitsEach: r.prof.contentionCommits}
	base := r.tempDir(fmt.Sprintf("contention-%s-%s-%s-%d-v%d", st.name, mode, driver, writers, format))
	actors, loc, gen0, err := r.setupActors(ctx, st, base, "w", writers, mode != modeDisjoint, 0, format)
	if err != nil {
		return res, err
	}
	for _, a := range actors {
		a.section = mode == modeSections
	}
	stopServes := func() error { return nil }
	if driver == driverServe {
		if stopServes, err = startServes(ctx, actors); err != nil {
			return res, err
		}
		defer stopServes()
	}
	before, err := st.list(ctx, loc)
	if err != nil {
		return res, err
	}
	_, inc0 := storeStats(before)
	if st.proxy != nil {
		st.proxy.take()
	}

	runCtx, cancel := context.WithTimeout(ctx, r.prof.contentionTimeout)
	defer cancel()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last time.Time
	errs := make([]error, len(actors))
	for i, a := range actors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range r.prof.contentionCommits {
				if err := a.edit(); err != nil {
					errs[i] = err
					return
				}
				if err := a.commit(ctx, runCtx, maxTriesPerCommit); err != nil {
					errs[i] = err
					return
				}
				mu.Lock()
				last = time.Now()
				mu.Unlock()
			}
		}()
	}
	clock := startBudget(servePids(actors), st.pid())
	t0 := time.Now()
	close(start)
	wg.Wait()
	if !last.IsZero() {
		res.Wall = last.Sub(t0)
	}
	res.Budget = clock.stop(totals(actors).CPU)
	if st.proxy != nil {
		res.Requests = st.proxy.take()
	}
	if err := stopServes(); err != nil {
		return res, err
	}
	if res.Unfinished, err = unfinishedSummary(errs, actors); err != nil {
		return res, err
	}
	if r.sabotage != nil {
		if err := r.sabotage(ctx, st, loc, actors); err != nil {
			return res, fmt.Errorf("sabotage: %w", err)
		}
	}
	t := totals(actors)
	res.Accepted, res.Busy, res.Conflicts, res.Other, res.Commit, res.Processes, res.CPU = t.OK, t.Busy, t.Conflicts, t.Other, t.Commits, t.Processes, t.CPU
	res.S3DollarsPerMillion = s3PerMillion(res.Requests, res.Accepted)
	if res.Wall > 0 {
		res.CommitsPerSec = float64(res.Accepted) / res.Wall.Seconds()
	}
	after, err := st.list(ctx, loc)
	if err != nil {
		return res, err
	}
	_, inc1 := storeStats(after)
	res.Attempts = inc1 - inc0
	if res.Accepted > 0 {
		res.AttemptsPerCommit = float64(res.Attempts) / float64(res.Accepted)
	}
	check, gen, err := r.audit(ctx, st, loc, base, t.accepted, t.written)
	if err != nil {
		return res, err
	}
	res.Check, res.Generations, res.loc = check, gen-gen0, loc
	return res, nil
}

// setupActors creates a notebook at a fresh location with one file per
// actor (or one shared file with a section each), commits it, and gives
// every actor its own pulled directory. It returns the generation after
// set-up. format 4 makes the set-up commit a format-version-4 one
// (bench.SeedV4, in this process): every slivingdoc process of the run
// then publishes by version 4, as it does on any version-4 store; format
// 3 commits with the binary, which writes version 3 on a new store.
func (r *runner) setupActors(ctx context.Context, st *storeTarget, base, prefix string, n int, shared bool, payload int, format int) ([]*actor, string, uint64, error) {
	loc := st.newLocation()
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	files := map[string][]byte{}
	if shared {
		files["shared.md"] = sharedFile(tags)
	} else {
		for _, t := range tags {
			files[t+".md"] = []byte("# " + t + "\n")
		}
	}
	gen, err := r.seed(ctx, st, loc, filepath.Join(base, "seed"), files, format)
	if err != nil {
		return nil, "", 0, err
	}
	actors := make([]*actor, n)
	for i, t := range tags {
		file := t + ".md"
		if shared {
			file = "shared.md"
		}
		// Through the counting proxy when there is one: the runs report
		// their traffic, lost races included.
		actors[i] = newActor(t, r.newWriter(st, loc, base, filepath.Join(base, t), st.proxy != nil && !r.prof.unproxied), file, shared, payload)
	}
	// Set-up pulls, two at a time: they are not measured.
	err = parallel(len(actors), 2, func(i int) error {
		_, err := mustOK(actors[i].nb.pull(ctx))
		return err
	})
	return actors, loc, gen, err
}

// seed publishes files as the first commit of loc, by the binary (format
// 3, as -format 3 once meant: the binary writes format 4 now too) or by
// an engine of this process (format 4), and returns its generation.
func (r *runner) seed(ctx context.Context, st *storeTarget, loc, dir string, files map[string][]byte, format int) (uint64, error) {
	switch format {
	case 3:
	case 4:
		store, err := st.open(ctx, loc)
		if err != nil {
			return 0, err
		}
		return bench.SeedV4(ctx, store, dir, files, "set-up")
	default:
		return 0, fmt.Errorf("format %d: the load generator seeds stores of format 3 or 4", format)
	}
	seed := r.newNotebook(st, loc, dir, false)
	if _, err := mustOK(seed.pull(ctx)); err != nil {
		return 0, err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(seed.dir, name), data, 0o644); err != nil {
			return 0, err
		}
	}
	o, err := mustOK(seed.commit(ctx, "set-up"))
	return o.Generation, err
}

// audit pulls the final notebook into a fresh directory and checks every
// tagged line; it returns the final generation too.
func (r *runner) audit(ctx context.Context, st *storeTarget, loc, base string, accepted, written []string) (LineCheck, uint64, error) {
	nb := r.newNotebook(st, loc, filepath.Join(base, "audit"), false)
	o, err := mustOK(nb.pull(ctx))
	if err != nil {
		return LineCheck{}, 0, fmt.Errorf("audit pull: %w", err)
	}
	tree, err := readTree(nb.dir)
	if err != nil {
		return LineCheck{}, 0, err
	}
	return checkLines(tree, accepted, written), o.Generation, nil
}

// servePids returns the pids of the actors' serve processes (none for
// the CLI driver).
func servePids(actors []*actor) []int {
	var pids []int
	for _, a := range actors {
		if a.nb.mcp != nil {
			pids = append(pids, a.nb.mcp.cmd.Process.Pid)
		}
	}
	return pids
}

// parallel runs f(0..n-1) with at most k at a time and returns the first
// error.
func parallel(n, k int, f func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(k)
	for i := range n {
		g.Go(func() error { return f(i) })
	}
	return g.Wait()
}
