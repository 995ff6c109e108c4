package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/slivingdoc/slivingdoc/bench"
)

// HistoryResult is the history workload: successive append commits on one
// notebook, then pulls of the grown notebook.
type HistoryResult struct {
	Store    string
	Files    int
	Commits  []Sample // in order; Commits[i] is commit i+1 after the tree
	First10  Dist
	Last10   Dist
	Ratio    float64 // Last10.Median / First10.Median
	ColdPull OpStats // a fresh directory and private root: every pack fetched
	WarmPull OpStats // no-op pull of the committing directory
	// ColdPullRequests is the traffic of one more cold pull, through the
	// counting proxy (SeaweedFS), not timed with the others.
	ColdPullRequests []OpCount
}

func (r *runner) history(ctx context.Context, st *storeTarget) (HistoryResult, error) {
	files := r.prof.historyFiles
	res := HistoryResult{Store: st.name, Files: files}
	base := r.tempDir("history-" + st.name)
	defer os.RemoveAll(base)
	nb := r.newNotebook(st, st.newLocation(), base, false)
	if _, err := mustOK(nb.pull(ctx)); err != nil {
		return res, err
	}
	names, err := fill(nb.dir, files, noteSize)
	if err != nil {
		return res, err
	}
	if _, err := mustOK(nb.commit(ctx, "tree")); err != nil {
		return res, err
	}
	for i := range r.prof.historyCommits {
		name := filepath.FromSlash(names[(i*7919)%len(names)])
		if err := appendTo(filepath.Join(nb.dir, name), bench.NoteText(-1-i, appendSize)); err != nil {
			return res, err
		}
		o, err := mustOK(nb.commit(ctx, fmt.Sprintf("append %d", i+1)))
		if err != nil {
			return res, fmt.Errorf("commit %d: %w", i+1, err)
		}
		res.Commits = append(res.Commits, o.Sample)
	}
	walls := func(ss []Sample) []time.Duration {
		var ds []time.Duration
		for _, s := range ss {
			ds = append(ds, s.Wall)
		}
		return ds
	}
	k := min(10, len(res.Commits)/2)
	res.First10 = summarize(walls(res.Commits[:k]))
	res.Last10 = summarize(walls(res.Commits[len(res.Commits)-k:]))
	if res.First10.Median > 0 {
		res.Ratio = float64(res.Last10.Median) / float64(res.First10.Median)
	}

	var cold, warm []Sample
	for i := range r.prof.coldPulls {
		fresh := r.newNotebook(st, nb.loc, filepath.Join(base, fmt.Sprintf("cold-%d", i)), false)
		o, err := mustOK(fresh.pull(ctx))
		if err != nil {
			return res, fmt.Errorf("cold pull: %w", err)
		}
		cold = append(cold, o.Sample)
		if err := os.RemoveAll(filepath.Dir(fresh.dir)); err != nil {
			return res, err
		}
	}
	if st.proxy != nil {
		counted := r.newNotebook(st, nb.loc, filepath.Join(base, "cold-counted"), true)
		st.proxy.take()
		if _, err := mustOK(counted.pull(ctx)); err != nil {
			return res, fmt.Errorf("counted cold pull: %w", err)
		}
		res.ColdPullRequests = st.proxy.take()
	}
	for range r.prof.warmPulls {
		o, err := mustOK(nb.pull(ctx))
		if err != nil {
			return res, fmt.Errorf("warm pull: %w", err)
		}
		warm = append(warm, o.Sample)
	}
	res.ColdPull, res.WarmPull = opStats(cold), opStats(warm)
	return res, nil
}
