package main

import (
	"fmt"
	"slices"
	"time"
)

// Verdict is one row of DESIGN §10 judged against this run.
type Verdict struct {
	Workload string
	Target   string
	Measured string
	Met      *bool  // nil: not measured in this run
	Evidence string // measured facts that bear on a miss
}

func verdict(met bool) *bool { return &met }

// targets judges every DESIGN §10 row on SeaweedFS figures (the design's
// reference store), medians of the repeated runs.
func targets(res *Results) []Verdict {
	var vs []Verdict
	add := func(workload, target string, measured string, met *bool) {
		vs = append(vs, Verdict{Workload: workload, Target: target, Measured: measured, Met: met})
	}
	evidence := func(format string, args ...any) { vs[len(vs)-1].Evidence = fmt.Sprintf(format, args...) }
	floors := "no floor measured"
	if f := res.Floor; f != nil {
		floors = fmt.Sprintf("process startup alone (`slivingdoc version`) %s wall / %s CPU; the three requests alone %s",
			fmtDur(f.Startup.Wall.Median), fmtDur(f.Startup.CPU.Median), fmtDur(f.Requests.Median))
	}
	loadNote := "load average median " + loadMedian(res.Meta.Load)

	// Requests.
	if rq := res.Requests; rq != nil {
		appends, noopPull, noopCommit := []int{}, -1, -1
		for _, op := range rq.Ops {
			switch op.Op {
			case reqAppendCommit:
				appends = append(appends, op.Requests)
			case reqNoopPull:
				noopPull = op.Requests
			case reqNoopCommit:
				noopCommit = op.Requests
			}
		}
		met := noopPull >= 0 && noopPull <= 1
		for _, n := range appends {
			met = met && n <= 3
		}
		add("requests per uncontended commit / no-op pull", "3 / 1",
			fmt.Sprintf("commits: %v; no-op pull: %d (no-op commit: %d)", appends, noopPull, noopCommit), verdict(met))
	} else {
		add("requests per uncontended commit / no-op pull", "3 / 1", "not measured", nil)
	}

	lat := func(files int) *LatencyResult {
		for i := range res.Latency {
			if res.Latency[i].Store == "seaweedfs" && res.Latency[i].Files == files {
				return &res.Latency[i]
			}
		}
		return nil
	}
	for _, c := range []struct {
		files int
		limit time.Duration
	}{{1000, 30 * time.Millisecond}, {10000, 100 * time.Millisecond}} {
		name := fmt.Sprintf("1 KiB append + commit, %s files x 2 KB", thousands(c.files))
		target := fmt.Sprintf("≤ %s", fmtDur(c.limit))
		if l := lat(c.files); l != nil {
			m := l.Ops[opAppendCommit].Wall.Median
			op := l.Ops[opAppendCommit]
			add(name, target, fmt.Sprintf("%s (CPU %s)", fmtDur(m), fmtDur(op.CPU.Median)), verdict(m <= c.limit))
			evidence("median CPU %s is %.0f%% of the wall time; p10 %s; %s; %s",
				fmtDur(op.CPU.Median), 100*float64(op.CPU.Median)/float64(max(m, 1)), fmtDur(op.Wall.P10), floors, loadNote)
		} else {
			add(name, target, "not measured", nil)
		}
	}

	hist := func(store string) *HistoryResult {
		for i := range res.History {
			if res.History[i].Store == store {
				return &res.History[i]
			}
		}
		return nil
	}
	if h := hist("seaweedfs"); h != nil && len(h.Alternated) > 0 {
		// The reference measured in the same run, alternated commit by
		// commit, decides: first and last 10 met different machine loads.
		add(fmt.Sprintf("the same after %d earlier commits (%s files)", len(h.Commits), thousands(h.Files)), "within 1.2x of the first commits",
			fmt.Sprintf("%s vs %s on a fresh notebook, alternated: %.2fx (last 10 vs first 10: %.2fx)", fmtDur(h.AltLong.Median), fmtDur(h.AltFresh.Median), h.AltRatio, h.Ratio), verdict(h.AltRatio <= 1.2))
		k := min(10, len(h.Commits)/2)
		evidence("CPU medians: first 10 %s, last 10 %s (CPU does not depend on the machine's load, wall does); %s",
			fmtDur(opStats(h.Commits[:k]).CPU.Median), fmtDur(opStats(h.Commits[len(h.Commits)-k:]).CPU.Median), loadNote)
	} else if h != nil {
		add(fmt.Sprintf("the same after %d earlier commits (%s files)", len(h.Commits), thousands(h.Files)), "within 1.2x of the first commits",
			fmt.Sprintf("last 10 %s vs first 10 %s: %.2fx", fmtDur(h.Last10.Median), fmtDur(h.First10.Median), h.Ratio), verdict(h.Ratio <= 1.2))
		k := min(10, len(h.Commits)/2)
		evidence("CPU medians: first 10 %s, last 10 %s (CPU does not depend on the machine's load, wall does); %s",
			fmtDur(opStats(h.Commits[:k]).CPU.Median), fmtDur(opStats(h.Commits[len(h.Commits)-k:]).CPU.Median), loadNote)
	} else {
		add("the same after 200 earlier commits", "within 1.2x of the first commits", "not measured", nil)
	}

	if l := lat(10000); l != nil {
		git := l.Ops[opGitStatus].Wall.Median
		for _, op := range []string{opNoopPull, opNoopCommit} {
			m := l.Ops[op].Wall.Median
			r := float64(m) / float64(git)
			add(op+" on 10,000 files", "≤ 2x git status",
				fmt.Sprintf("%s vs git status %s: %.2fx", fmtDur(m), fmtDur(git), r), verdict(r <= 2))
			evidence("CPU %s vs git status %s (%.2fx); max RSS %s vs %s; %s; %s", fmtDur(l.Ops[op].CPU.Median), fmtDur(l.Ops[opGitStatus].CPU.Median),
				float64(l.Ops[op].CPU.Median)/float64(max(l.Ops[opGitStatus].CPU.Median, 1)), fmtKiB(l.Ops[op].MaxRSS), fmtKiB(l.Ops[opGitStatus].MaxRSS), floors, loadNote)
		}
	} else {
		add("no-op pull or commit on 10,000 files", "≤ 2x git status", "not measured", nil)
	}

	if h := hist("seaweedfs"); h != nil && h.ColdPull.Wall.N > 0 {
		m := h.ColdPull.Wall.Median
		add(fmt.Sprintf("cold pull of %s files after %d commits", thousands(h.Files), len(h.Commits)), "≤ 0.6 s",
			fmt.Sprintf("%s (max %s)", fmtDur(m), fmtDur(h.ColdPull.Wall.Max)), verdict(m <= 600*time.Millisecond))
		cold := "its requests were not counted"
		if len(h.ColdPullRequests) > 0 {
			var parts []string
			total := 0
			for _, c := range h.ColdPullRequests {
				total += c.Requests
				parts = append(parts, fmt.Sprintf("%s ×%d ↓%s (%s median)", c.Class, c.Requests, fmtBytes(c.BytesDn), fmtDur(c.Time.Median)))
			}
			cold = fmt.Sprintf("one such cold pull through the proxy sent %d requests: %s", total, joinSemi(parts))
		}
		if h.ColdPullFresh.Wall.N > 0 {
			cold += fmt.Sprintf("; reference in the same run, alternated: a cold pull of the fresh notebook (the same files, %d commits) %s median, CPU %s",
				freshHistory+len(h.Alternated), fmtDur(h.ColdPullFresh.Wall.Median), fmtDur(h.ColdPullFresh.CPU.Median))
		}
		evidence("CPU median %s of wall %s; %s; %s", fmtDur(h.ColdPull.CPU.Median), fmtDur(m), cold, loadNote)
	} else {
		add("cold pull of 1,000 files after 200 commits", "≤ 0.6 s", "not measured", nil)
	}

	// Stored bytes do not depend on the store's speed: SeaweedFS's row
	// when there is one, else the file store's.
	var bytesRow *BytesResult
	for i := range res.Bytes {
		if bytesRow == nil || res.Bytes[i].Store == "seaweedfs" {
			bytesRow = &res.Bytes[i]
		}
	}
	if b := bytesRow; b != nil && len(b.PerCommit) > 0 {
		mean := meanInt(b.PerCommit) // from the figures: results written before Mean existed render the same
		add("bytes stored per 1 KiB append to a 1 MiB file", "mean ≤ 16 KiB over 200 appends",
			fmt.Sprintf("mean %s (median %s, max %s) over %d commits, %s", fmtBytes(mean), fmtBytes(b.Median), fmtBytes(b.Max), len(b.PerCommit), b.Store),
			verdict(mean <= 16<<10 && len(b.PerCommit) >= 200))
		if len(b.Added) > 0 {
			evidence("added by the appends: %s", fmtClasses(b.Added))
		}
	} else {
		add("bytes stored per 1 KiB append to a 1 MiB file", "mean ≤ 16 KiB over 200 appends", "not measured", nil)
	}
	if b := bytesRow; b != nil && b.Tree != nil {
		t := b.Tree
		add(fmt.Sprintf("store size: %s files x %s, then %d one-line commits", thousands(t.Files), fmtBytes(int64(t.FileSize)), t.Commits),
			"≤ 2.1 MB (the upstream tool's)", fmt.Sprintf("%s, %s", fmtBytes(t.Total), b.Store), verdict(t.Total <= 2_100_000 && t.Commits >= 200))
		evidence("%s after the first commit; by kind of object: %s", fmtBytes(t.AfterTree), fmtClasses(t.Classes))
	} else {
		add("store size: 1,000 files x 2 KB, then 200 one-line commits", "≤ 2.1 MB (the upstream tool's)", "not measured", nil)
	}

	cont := func(writers int) *ContentionResult {
		for i := range res.Contention {
			c := &res.Contention[i]
			if c.Store == "seaweedfs" && c.Mode == modeDisjoint && c.Writers == writers && withDriver("", c.Driver) == "" && formatOf(c.Format) == 3 {
				return c
			}
		}
		return nil
	}
	if c := cont(10); c != nil {
		add("10 writers on disjoint files, 10 commits each", "≥ 50 accepted commits/s, no REMOTE_BUSY",
			fmt.Sprintf("%.1f commits/s, %d REMOTE_BUSY, %d/%d accepted", c.CommitsPerSec, c.Busy, c.Accepted, c.Writers*c.CommitsEach),
			verdict(c.CommitsPerSec >= 50 && c.Busy == 0))
		evidence("%s", contentionEvidence(c, res.Meta.CPUs))
	} else {
		add("10 writers on disjoint files, 10 commits each", "≥ 50 accepted commits/s, no REMOTE_BUSY", "not measured", nil)
	}
	if c := cont(50); c != nil {
		all := c.Writers * c.CommitsEach
		add("50 writers on disjoint files", "all commits accepted, none REMOTE_BUSY",
			fmt.Sprintf("%d/%d accepted, %d REMOTE_BUSY (%.1f commits/s)", c.Accepted, all, c.Busy, c.CommitsPerSec),
			verdict(c.Accepted == all && c.Busy == 0))
		evidence("%s", contentionEvidence(c, res.Meta.CPUs))
	} else {
		add("50 writers on disjoint files", "all commits accepted, none REMOTE_BUSY", "not measured", nil)
	}

	// Issue 16: writers appending to one shared file merge without
	// conflicts; their rate is quoted next to the disjoint files' rate.
	for _, writers := range []int{10, 50} {
		name := fmt.Sprintf("%d writers appending to one shared file", writers)
		target := "0 conflicts, every accepted line once"
		var shared *ContentionResult
		for i := range res.Contention {
			if c := &res.Contention[i]; c.Store == "seaweedfs" && c.Mode == modeShared && c.Writers == writers && formatOf(c.Format) == 3 {
				shared = c
			}
		}
		if shared == nil {
			add(name, target, "not measured", nil)
			continue
		}
		got := fmt.Sprintf("%d conflicts, %d/%d accepted, %.1f commits/s", shared.Conflicts, shared.Accepted, shared.Writers*shared.CommitsEach, shared.CommitsPerSec)
		if d := cont(writers); d != nil {
			got += fmt.Sprintf(" (disjoint files: %.1f commits/s)", d.CommitsPerSec)
		}
		add(name, target, got+"; audit "+auditText(shared.Check, shared.Generations, shared.Accepted), verdict(shared.Conflicts == 0 && shared.Check.OK()))
	}

	if len(res.Merge) > 0 {
		met := true
		var parts []string
		for _, m := range res.Merge {
			met = met && m.Ratio <= 1
			parts = append(parts, fmt.Sprintf("%d MB: %s vs %s (%.2fx)", m.Size>>20, fmtDur(m.Ours.Wall.Median), fmtDur(m.Git.Wall.Median), m.Ratio))
		}
		add("merge-file on 1–5 MB notes", "not slower than git merge-file", joinSemi(parts), verdict(met))
		var cpu []string
		for _, m := range res.Merge {
			cpu = append(cpu, fmt.Sprintf("%d MB CPU %s vs %s", m.Size>>20, fmtDur(m.Ours.CPU.Median), fmtDur(m.Git.CPU.Median)))
		}
		evidence("%s; %s; %s", joinSemi(cpu), floors, loadNote)
	} else {
		add("merge-file on 1–5 MB notes", "not slower than git merge-file", "not measured", nil)
	}
	return vs
}

// contentionEvidence explains a contention figure by what bounds it: the
// CPU the commit processes needed on this machine's cores, and the lost
// conditional writes.
func contentionEvidence(c *ContentionResult, cpus int) string {
	if c.Accepted == 0 {
		return "no commit accepted"
	}
	s := fmt.Sprintf("%.2f pack uploads per accepted commit", c.AttemptsPerCommit)
	if c.CPU > 0 {
		perCommit := c.CPU / time.Duration(c.Accepted)
		s = fmt.Sprintf("%d commit processes used %.1f CPU-s for %d accepted commits (%s CPU per accepted commit, retries included): "+
			"on %d cores the commit processes alone cannot exceed %.1f commits/s; %.2f pack uploads per accepted commit",
			c.Processes, c.CPU.Seconds(), c.Accepted, fmtDur(perCommit), cpus, float64(cpus)/perCommit.Seconds(), c.AttemptsPerCommit)
	}
	for _, r := range c.Requests {
		if r.Class == "PUT if-match current" {
			s += fmt.Sprintf("; %d of %d conditional writes of `current` lost the race (412), answered in %s median / %s max", r.Statuses[412], r.Requests, fmtDur(r.Time.Median), fmtDur(r.Time.Max))
		}
		if r.Class == "HEAD current" {
			s += fmt.Sprintf("; %d retries checked `current` with a HEAD before uploading", r.Requests)
		}
	}
	return s
}

func loadMedian(l []float64) string {
	if len(l) == 0 {
		return "unknown"
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return fmt.Sprintf("%.2f", s[(len(s)-1)/2])
}
