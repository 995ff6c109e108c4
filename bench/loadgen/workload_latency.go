package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/slivingdoc/slivingdoc/bench"
)

// LatencyResult is the latency workload on one store and notebook size:
// repeated 1 KiB append + commit, no-op commit and no-op pull, each a whole
// process, with git on a copy of the same tree measured in between.
type LatencyResult struct {
	Store   string
	Files   int
	Initial Sample // the first commit of the whole tree (set-up, one run)
	Ops     map[string]OpStats
}

// OpStats is the distribution of one operation's process costs.
type OpStats struct {
	Wall   Dist
	CPU    Dist
	MaxRSS int64 // KiB, the largest of the runs
}

func opStats(ss []Sample) OpStats {
	var walls, cpus []time.Duration
	var rss int64
	for _, s := range ss {
		walls = append(walls, s.Wall)
		cpus = append(cpus, s.CPU)
		rss = max(rss, s.RSSKiB)
	}
	return OpStats{Wall: summarize(walls), CPU: summarize(cpus), MaxRSS: rss}
}

// Operation names of the latency tables, in display order.
const (
	opAppendCommit = "append 1 KiB + commit"
	opNoopCommit   = "no-op commit"
	opNoopPull     = "no-op pull"
	opGitStatus    = "git status (clean)"
	opGitCommit    = "git commit -a (local)"
)

var latencyOps = []string{opAppendCommit, opNoopCommit, opNoopPull, opGitStatus, opGitCommit}

// noteSize is the size of every file of the generated notebooks.
const noteSize = 2048

// appendSize is the edit of one commit in latency, history and bytes.
const appendSize = 1024

func (r *runner) latency(ctx context.Context, st *storeTarget, files int) (LatencyResult, error) {
	res := LatencyResult{Store: st.name, Files: files, Ops: map[string]OpStats{}}
	base := r.tempDir(fmt.Sprintf("latency-%s-%d", st.name, files))
	nb := r.newNotebook(st, st.newLocation(), base, false)
	if _, err := mustOK(nb.pull(ctx)); err != nil {
		return res, err
	}
	names, err := fill(nb.dir, files, noteSize)
	if err != nil {
		return res, err
	}
	init, err := mustOK(nb.commit(ctx, "tree"))
	if err != nil {
		return res, err
	}
	res.Initial = init.Sample
	git, err := newGitRef(ctx, nb.dir, filepath.Join(base, "git"))
	if err != nil {
		return res, err
	}
	samples := map[string][]Sample{}
	for i := range r.prof.latencyReps {
		name := filepath.FromSlash(names[(i*7919)%len(names)]) // spread over the tree
		edit := bench.NoteText(-1-i, appendSize)
		if err := appendTo(filepath.Join(nb.dir, name), edit); err != nil {
			return res, err
		}
		if err := appendTo(filepath.Join(git.dir, name), edit); err != nil {
			return res, err
		}
		steps := []struct {
			op  string
			run func() (Sample, error)
		}{
			{opAppendCommit, cliStep(ctx, nb, "commit", "-m", "append 1 KiB")},
			{opGitCommit, func() (Sample, error) { return git.commitAll(ctx, "append 1 KiB") }},
			{opNoopCommit, cliStep(ctx, nb, "commit", "-m", "nothing changed")},
			{opNoopPull, cliStep(ctx, nb, "pull")},
			{opGitStatus, func() (Sample, error) { return git.status(ctx) }},
		}
		for _, s := range steps {
			sm, err := s.run()
			if err != nil {
				return res, fmt.Errorf("%s: %w", s.op, err)
			}
			samples[s.op] = append(samples[s.op], sm)
		}
	}
	for op, ss := range samples {
		res.Ops[op] = opStats(ss)
	}
	return res, nil
}

// cliStep runs `slivingdoc <cmd> <dir> <args...>` on nb and requires OK.
func cliStep(ctx context.Context, nb *notebook, cmd string, args ...string) func() (Sample, error) {
	return func() (Sample, error) {
		o, err := mustOK(runCLI(ctx, nb.bin, nb.env, append([]string{cmd, nb.dir}, args...)...))
		return o.Sample, err
	}
}
