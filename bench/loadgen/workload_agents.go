package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// AgentsResult is the planning workload: agents committing ~1 KB each,
// once per minute, time-compressed so that every agent commits once in
// Window at an independent random instant; then a burst in which all of
// them commit at the same instant.
type AgentsResult struct {
	Store  string
	Driver string `json:",omitempty"` // driverCLI ("" in older results) or driverServe
	Format int    `json:",omitempty"` // the store's format version (0 in older results: 3)
	// PrivateRoots: rootsShared or rootsOwn ("" in older results: own).
	PrivateRoots string `json:",omitempty"`
	Unproxied    bool   `json:",omitempty"` // -unproxied: no request counts
	Agents       int
	Window       time.Duration
	Spread       AgentPhase
	Burst        AgentPhase
}

// AgentPhase is one phase of the agents workload.
type AgentPhase struct {
	Accepted   int
	Busy       int
	Conflicts  int
	Other      map[string]int
	Unfinished []string
	Commit     OpStats       // accepted commit processes
	Processes  int           // every commit process
	CPU        time.Duration // user+system of all commit processes
	Wall       time.Duration // phase start to the last accepted commit
	Attempts   int           // increment packs uploaded
	Check      LineCheck
	Requests   []OpCount // SeaweedFS: the phase's traffic through the proxy
	// S3DollarsPerMillion is what Requests would cost at S3 Standard
	// request prices per million accepted commits (0 without Requests).
	S3DollarsPerMillion float64
	// Budget is the CPU each party spent in the phase's window.
	Budget Budget `json:",omitempty"`
}

// agentPayload is the ~1 KB each agent commits (a tagged line plus text).
const agentPayload = 960

// agentsWorkloadBy runs the agents workload with the agents' calls made
// by driver, on a store of format version 3 or 4; serve processes live
// through both phases, as a host's do.
func (r *runner) agentsWorkloadBy(ctx context.Context, st *storeTarget, driver string, format int) (res AgentsResult, err error) {
	res = AgentsResult{Store: st.name, Driver: driver, Format: format, PrivateRoots: r.rootsSetting(), Unproxied: r.prof.unproxied, Agents: r.prof.agents, Window: r.prof.agentWindow}
	base := r.tempDir(fmt.Sprintf("agents-%s-%s-v%d", st.name, driver, format))
	actors, loc, _, err := r.setupActors(ctx, st, base, "a", r.prof.agents, false, agentPayload, format)
	if err != nil {
		return res, err
	}
	if driver == driverServe {
		stop, serr := startServes(ctx, actors)
		if serr != nil {
			return res, serr
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	rng := rand.New(rand.NewPCG(42, uint64(r.prof.agents)))
	offsets := make([]time.Duration, len(actors))
	for i := range offsets {
		offsets[i] = time.Duration(rng.Int64N(int64(r.prof.agentWindow)))
	}
	if res.Spread, err = r.agentPhase(ctx, st, loc, base+"/spread", actors, offsets); err != nil {
		return res, fmt.Errorf("spread: %w", err)
	}
	for _, a := range actors { // the burst's figures are its own
		a.ok, a.busy, a.conflicts, a.other, a.commits, a.attempts = 0, 0, 0, map[string]int{}, nil, nil
	}
	if res.Burst, err = r.agentPhase(ctx, st, loc, base+"/burst", actors, make([]time.Duration, len(actors))); err != nil {
		return res, fmt.Errorf("burst: %w", err)
	}
	return res, nil
}

// agentPhase lets actor i edit and commit at offsets[i] after a common
// start.
func (r *runner) agentPhase(ctx context.Context, st *storeTarget, loc, base string, actors []*actor, offsets []time.Duration) (AgentPhase, error) {
	var ph AgentPhase
	before, err := st.list(ctx, loc)
	if err != nil {
		return ph, err
	}
	_, inc0 := storeStats(before)
	if st.proxy != nil {
		st.proxy.take()
	}
	var longest time.Duration
	for _, o := range offsets {
		longest = max(longest, o)
	}
	runCtx, cancel := context.WithTimeout(ctx, longest+r.prof.contentionTimeout)
	defer cancel()
	for _, a := range actors { // edits first: the burst is the commits alone
		if err := a.edit(); err != nil {
			return ph, err
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last time.Time
	errs := make([]error, len(actors))
	clock := startBudget(servePids(actors), st.pid())
	t0 := time.Now()
	for i, a := range actors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(time.Until(t0.Add(offsets[i]))):
			case <-runCtx.Done():
				errs[i] = fmt.Errorf("%s: %w", a.tag, errStopped)
				return
			}
			if errs[i] = a.commit(ctx, runCtx, maxTriesPerCommit); errs[i] == nil {
				mu.Lock()
				last = time.Now()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if !last.IsZero() {
		ph.Wall = last.Sub(t0)
	}
	ph.Budget = clock.stop(totals(actors).CPU)
	if st.proxy != nil {
		ph.Requests = st.proxy.take()
	}
	if ph.Unfinished, err = unfinishedSummary(errs, actors); err != nil {
		return ph, err
	}
	t := totals(actors)
	ph.Accepted, ph.Busy, ph.Conflicts, ph.Other, ph.Commit, ph.Processes, ph.CPU = t.OK, t.Busy, t.Conflicts, t.Other, t.Commits, t.Processes, t.CPU
	ph.S3DollarsPerMillion = s3PerMillion(ph.Requests, ph.Accepted)
	after, err := st.list(ctx, loc)
	if err != nil {
		return ph, err
	}
	_, inc1 := storeStats(after)
	ph.Attempts = inc1 - inc0
	ph.Check, _, err = r.audit(ctx, st, loc, base, t.accepted, t.written)
	return ph, err
}
