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
	// Alternated is the reference measured in the same run: after the
	// history, commits alternate one by one between the long notebook and
	// a fresh notebook of the same files on the same store (a few commits
	// old), so both meet the same machine load and the same server. With
	// a counting proxy, both go through it and each commit's requests are
	// recorded.
	Alternated []AlternatedPair
	AltLong    Dist    // the long notebook's commits of Alternated
	AltFresh   Dist    // the fresh notebook's
	AltRatio   float64 // AltLong.Median / AltFresh.Median
	// HistoryRequests is the traffic of all the history's commits (tree
	// commit excluded), through the counting proxy when the alternation
	// runs; ColdPullFresh the cold pulls of the fresh notebook, alternated
	// with ColdPull's: the reference for the cold-pull row.
	HistoryRequests []OpCount
	ColdPullFresh   OpStats
}

// AlternatedPair is one commit on each notebook, long history first.
type AlternatedPair struct {
	Long, Fresh         Sample
	LongReqs, FreshReqs []OpCount // through the counting proxy (SeaweedFS)
}

func (r *runner) history(ctx context.Context, st *storeTarget) (HistoryResult, error) {
	files := r.prof.historyFiles
	res := HistoryResult{Store: st.name, Files: files}
	base := r.tempDir("history-" + st.name)
	// With the alternation and a counting proxy, every commit goes through
	// the proxy (the store's identity includes its endpoint, so one
	// directory cannot switch): the reference commits too, so both see it.
	proxied := st.proxy != nil && r.prof.historyAlternate > 0
	nb := r.newNotebook(st, st.newLocation(), base, proxied)
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
	if proxied {
		st.proxy.take()
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

	if proxied {
		res.HistoryRequests = st.proxy.take()
	}
	freshLoc, err := r.alternate(ctx, st, nb, base, names, &res)
	if err != nil {
		return res, err
	}

	var cold, coldFresh, warm []Sample
	coldPull := func(loc, dir string) (Sample, error) {
		fresh := r.newNotebook(st, loc, dir, false)
		o, err := mustOK(fresh.pull(ctx))
		if err != nil {
			return Sample{}, fmt.Errorf("cold pull: %w", err)
		}
		return o.Sample, os.RemoveAll(filepath.Dir(fresh.dir))
	}
	for i := range r.prof.coldPulls {
		s, err := coldPull(nb.loc, filepath.Join(base, fmt.Sprintf("cold-%d", i)))
		if err != nil {
			return res, err
		}
		cold = append(cold, s)
		if freshLoc != "" {
			s, err := coldPull(freshLoc, filepath.Join(base, fmt.Sprintf("cold-fresh-%d", i)))
			if err != nil {
				return res, err
			}
			coldFresh = append(coldFresh, s)
		}
	}
	res.ColdPullFresh = opStats(coldFresh)
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

// freshHistory is how many commits the reference notebook has before the
// alternation: past its first commits' one-time costs, far from the long
// one's history.
const freshHistory = 10

// alternate measures prof.historyAlternate commits on the long notebook,
// each followed by one on a fresh notebook (see HistoryResult.Alternated).
func (r *runner) alternate(ctx context.Context, st *storeTarget, long *notebook, base string, names []string, res *HistoryResult) (freshLoc string, err error) {
	n := r.prof.historyAlternate
	if n <= 0 {
		return "", nil
	}
	proxied := st.proxy != nil
	freshBase := filepath.Join(base, "fresh")
	fresh := r.newNotebook(st, st.newLocation(), freshBase, proxied)
	if _, err := mustOK(fresh.pull(ctx)); err != nil {
		return "", err
	}
	if _, err := fill(fresh.dir, len(names), noteSize); err != nil {
		return "", err
	}
	if _, err := mustOK(fresh.commit(ctx, "tree")); err != nil {
		return "", err
	}
	step := func(nb *notebook, i int) (Sample, []OpCount, error) {
		name := filepath.FromSlash(names[(i*7919)%len(names)])
		if err := appendTo(filepath.Join(nb.dir, name), bench.NoteText(-1-i, appendSize)); err != nil {
			return Sample{}, nil, err
		}
		if proxied {
			st.proxy.take()
		}
		o, err := mustOK(nb.commit(ctx, fmt.Sprintf("append %d", i+1)))
		if err != nil {
			return Sample{}, nil, err
		}
		var reqs []OpCount
		if proxied {
			reqs = st.proxy.take()
		}
		return o.Sample, reqs, nil
	}
	for i := range freshHistory {
		if _, _, err := step(fresh, i); err != nil {
			return "", fmt.Errorf("fresh commit %d: %w", i+1, err)
		}
	}
	var longs, freshes []time.Duration
	for i := range n {
		var p AlternatedPair
		var err error
		if p.Long, p.LongReqs, err = step(long, r.prof.historyCommits+i); err != nil {
			return "", fmt.Errorf("alternated commit %d (long): %w", i+1, err)
		}
		if p.Fresh, p.FreshReqs, err = step(fresh, freshHistory+i); err != nil {
			return "", fmt.Errorf("alternated commit %d (fresh): %w", i+1, err)
		}
		res.Alternated = append(res.Alternated, p)
		longs, freshes = append(longs, p.Long.Wall), append(freshes, p.Fresh.Wall)
	}
	res.AltLong, res.AltFresh = summarize(longs), summarize(freshes)
	if res.AltFresh.Median > 0 {
		res.AltRatio = float64(res.AltLong.Median) / float64(res.AltFresh.Median)
	}
	return fresh.loc, nil
}
