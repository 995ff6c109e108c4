//go:build unix

package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

func (s *stats) kindsScheduled() []faultKind {
	var ks []faultKind
	for _, k := range allKinds {
		if s.scheduled[k] > 0 {
			ks = append(ks, k)
		}
	}
	return ks
}

func (s *stats) errorRows() []*errCount {
	rows := make([]*errCount, 0, len(s.errors))
	for _, e := range s.errors {
		rows = append(rows, e)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].N != rows[j].N {
			return rows[i].N > rows[j].N
		}
		return rows[i].Code+rows[i].Reason < rows[j].Code+rows[j].Reason
	})
	return rows
}

func (s *stats) opsTotal() int {
	n := 0
	for _, v := range s.ops {
		n += v
	}
	return n
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// failpointFigures is "after-recovery-flag 12, mid-rewrite 11, …".
func failpointFigures(s *stats) string {
	var parts []string
	for _, p := range failpointsInTurn {
		parts = append(parts, fmt.Sprintf("%s %d", p, s.fpFired[p]))
	}
	return strings.Join(parts, ", ")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

// textReport is the figures of one store on the terminal.
func textReport(s *stats, verbose bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos: %s: %d fault events in %s\n", s.store, s.events(), s.faultPhase.Round(time.Second))
	for _, k := range s.kindsScheduled() {
		fmt.Fprintf(&b, "  fault %-14s scheduled %4d  fired %4d\n", k, s.scheduled[k], s.fired[k])
	}
	fmt.Fprintf(&b, "  operations %d (pull %d, commit %d): OK %d, errors %d, killed %d, timeouts %d, broken %d\n",
		s.opsTotal(), s.ops["pull"], s.ops["commit"], s.outcomes[outOK], s.outcomes[outDomain], s.outcomes[outKilled], s.outcomes[outTimeout], s.outcomes[outBroken])
	fmt.Fprintf(&b, "  operation time: p50 %s, p99 %s, max %s (%s) within the bound\n", ms(s.percentile(0.5)), ms(s.percentile(0.99)), ms(s.longest.Duration()), s.longest.Op)
	for _, e := range s.errorRows() {
		fmt.Fprintf(&b, "  error %s · %s  action %s  retryable %t  x%d\n", e.Code, e.Reason, e.Action, e.Retryable, e.N)
		if verbose {
			for _, c := range e.Causes {
				fmt.Fprintf(&b, "    %s\n", c)
			}
		}
	}
	for _, x := range []struct {
		when string
		v    verdict
	}{{"after faults", s.before}, {"after settle", s.verdict}} {
		v := x.v
		fmt.Fprintf(&b, "  %s: tokens written %d: accepted %d, published without OK %d, on disk only %d, lost %d, duplicated %d, phantom %d\n",
			x.when, v.Written, v.Accepted, v.Published, v.OnDisk, v.Lost, v.Duplicated, v.Phantom)
	}
	fmt.Fprintf(&b, "  kills at failpoints: %s\n", failpointFigures(s))
	fmt.Fprintf(&b, "  kills twice in a row: %s\n", doubleFigures(s))
	fmt.Fprintf(&b, "  audits: marker lines in %d published pulls: %d; conflicts in files not edited locally: %d\n", s.markerPulls, s.markerLines, len(s.foreign))
	fmt.Fprintf(&b, "  largest private root at the end: %.1f MB\n", float64(s.privateMax)/(1<<20))
	fmt.Fprintf(&b, "  generation reached %d; verify passed: %t; operations during outages: %d; conflict blocks resolved: %d; cache resets: %d\n",
		s.generation, s.verified, s.duringOutage, s.resolved, len(s.resets))
	for _, cx := range sortedKeys(s.conflictCx) {
		fmt.Fprintf(&b, "  conflict: %s x%d\n", cx, s.conflictCx[cx])
	}
	for _, n := range s.notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	for _, u := range s.unfired {
		fmt.Fprintf(&b, "  FAIL: fault did not fire: %s\n", u)
	}
	for _, f := range s.failures {
		fmt.Fprintf(&b, "  FAIL: %s\n", f)
	}
	return b.String()
}

// doubleFigures is "3 (mid-rewrite+after-baseline 1, …); plain commit
// after: ok 2, error CONTENT_CONFLICT·MERGE_CONFLICT 1; 1 restart".
func doubleFigures(s *stats) string {
	n := 0
	var pairs, plain []string
	for _, k := range sortedKeys(s.dblFired) {
		n += s.dblFired[k]
		pairs = append(pairs, fmt.Sprintf("%s %d", k, s.dblFired[k]))
	}
	for _, k := range sortedKeys(s.dblPlain) {
		plain = append(plain, fmt.Sprintf("%s %d", k, s.dblPlain[k]))
	}
	out := fmt.Sprintf("%d", n)
	if n > 0 {
		out += fmt.Sprintf(" (%s); the plain commit after: %s; kills followed by another writer's log line: %d of %d",
			strings.Join(pairs, ", "), strings.Join(plain, ", "), s.dblPauses, 2*n)
	}
	out += fmt.Sprintf("; second kills missed (pair started over): %d", s.dblRestarts)
	if len(s.dblMissed) > 0 {
		out += "; not completed: " + strings.Join(s.dblMissed, ", ")
	}
	return out
}

// markdownReport is the committed campaign summary.
func markdownReport(cfg config, all []*stats, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Fault campaign %s\n\n", now.Format("2006-01-02"))
	fmt.Fprintf(&b, "Seed %d, %d writers per store, up to %d fault events per store, operation bound %s, checkpoint every %d packs, store format %d.\n",
		cfg.seed, cfg.writers, cfg.rounds, cfg.opBound, cfg.checkpointPacks, cfg.format)
	fmt.Fprintf(&b, "Replay: `go run ./bench/chaos %s`.\n\n", replayArgs(cfg))
	fmt.Fprintf(&b, "Each writer runs the built binary, one process per operation: a pull, or a fresh token line (its own file or its section of a shared file) and a commit. The journal records every token written and every token a commit reported OK. At the end every writer commits what it holds, a fresh directory pulls, `slivingdoc verify` checks the store, and every token is judged. Every operation must end within the bound, every error must be a documented code·reason with its documented action and retryability, and an operation that ran entirely while SeaweedFS was down or frozen must end `STORAGE_FAILURE`, retryable, action `RETRY`.\n\n")

	events, ops := 0, 0
	for _, s := range all {
		events += s.events()
		ops += s.opsTotal()
	}
	fmt.Fprintf(&b, "**%d fault events, %d operations, across %d stores.**\n\n", events, ops, len(all))

	fmt.Fprintf(&b, "## Faults\n\n| store | kind | scheduled | fired |\n| --- | --- | ---: | ---: |\n")
	for _, s := range all {
		for _, k := range s.kindsScheduled() {
			fmt.Fprintf(&b, "| %s | %s | %d | %d |\n", s.store, k, s.scheduled[k], s.fired[k])
		}
	}
	fmt.Fprintf(&b, "\n## Operations\n\n| store | fault phase | operations | pull | commit | OK | errors | killed | timeouts | broken | p50 | p99 | max |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range all {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %s | %s | %s |\n", s.store, s.faultPhase.Round(time.Second),
			s.opsTotal(), s.ops["pull"], s.ops["commit"], s.outcomes[outOK], s.outcomes[outDomain], s.outcomes[outKilled],
			s.outcomes[outTimeout], s.outcomes[outBroken], ms(s.percentile(0.5)), ms(s.percentile(0.99)), ms(s.longest.Duration()))
	}
	fmt.Fprintf(&b, "\n## Errors seen\n\nEvery one checked against the documented table (`diag.Catalog`, docs/errors.md): code, reason, action and retryability.\n\n| store | code | reason | action | retryable | count |\n| --- | --- | --- | --- | --- | ---: |\n")
	for _, s := range all {
		for _, e := range s.errorRows() {
			fmt.Fprintf(&b, "| %s | `%s` | `%s` | `%s` | %t | %d |\n", s.store, e.Code, e.Reason, e.Action, e.Retryable, e.N)
		}
	}
	fmt.Fprintf(&b, "\n## Outcome\n\nJudged right after the fault phase (a token never reported OK must be published or still in its writer's directory) and again after every writer settled. A token reported OK must be in a fresh pull exactly once, both times.\n\n| store | when | tokens written | accepted (OK) | published without OK | on disk only | lost | duplicated | phantom |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range all {
		for _, x := range []struct {
			when string
			v    verdict
		}{{"after faults", s.before}, {"after settle", s.verdict}} {
			v := x.v
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d |\n", s.store, x.when, v.Written, v.Accepted, v.Published, v.OnDisk, v.Lost, v.Duplicated, v.Phantom)
		}
	}
	fmt.Fprintf(&b, "\n## Issue 14 audits\n\n| store | kills at failpoints | kills twice in a row | published pulls audited | marker lines published | conflicts in files not edited locally |\n| --- | --- | --- | ---: | ---: | ---: |\n")
	for _, s := range all {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d |\n", s.store, failpointFigures(s), doubleFigures(s), s.markerPulls, s.markerLines, len(s.foreign))
	}
	fmt.Fprintf(&b, "\n| store | generation reached | largest private root | verify | ops entirely during outages | conflict blocks resolved | cache resets | failures |\n| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n")
	for _, s := range all {
		verify := "fail"
		if s.verified {
			verify = "pass"
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f MB | %s | %d | %d | %d | %d |\n", s.store, s.generation, float64(s.privateMax)/(1<<20), verify, s.duringOutage, s.resolved, len(s.resets), len(s.failures)+len(s.unfired))
	}
	var notes []string
	for _, s := range all {
		for _, n := range s.notes {
			notes = append(notes, s.store+": "+n)
		}
		for _, cx := range sortedKeys(s.conflictCx) {
			notes = append(notes, fmt.Sprintf("%s: %d× %s", s.store, s.conflictCx[cx], cx))
		}
		for _, r := range s.resets {
			notes = append(notes, s.store+": the object cache of "+r+" was removed by the campaign after three integrity errors in a row (the engine keeps reporting a damaged cached pack; the documented action, verify, finds the store whole)")
		}
		for _, u := range s.unfired {
			notes = append(notes, s.store+": FAIL: fault did not fire: "+u)
		}
		for _, f := range s.failures {
			notes = append(notes, s.store+": FAIL: "+strings.ReplaceAll(f, "\n", " "))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "\n## Notes\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}
