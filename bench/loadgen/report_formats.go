package main

import (
	"fmt"
	"strings"
	"time"
)

// The fleet rows by store format: every contention and agents row of a
// run that measured format 4, beside the same row at format 3 when the
// run measured both, judged against its DESIGN §10 target and against
// the issue-38 bound on re-uploads (each accepted commit's own pack or
// proposal uploaded at most 1.1 times on average).

// contentionStep and agentsStep name the steps of run (main.go), so that
// a row finds the load average recorded around it.
func contentionStep(store, mode string, writers int, driver string, format int) string {
	return fmt.Sprintf("contention %s %s %d writers (%s, format %d)", store, mode, writers, driver, format)
}

func agentsStep(store, driver string, format int) string {
	return fmt.Sprintf("agents %s (%s, format %d)", store, driver, format)
}

// formatOf is a row's format version; results written before the field
// existed were all format 3.
func formatOf(f int) int {
	if f == 0 {
		return 3
	}
	return f
}

// withFormat marks a row label with its format when the run measured v4.
func withFormat(s string, format int) string {
	if format == 4 {
		return s + " [v4]"
	}
	return s
}

// maxUploadsPerCommit is the bound on uploads of a commit's own pack or
// proposal per accepted commit (DESIGN §10, 50 writers; issue 38 for
// every fleet row).
const maxUploadsPerCommit = 1.1

// fleetTarget is the DESIGN §10 target of a contention row and whether
// it is met, without the uploads bound (judged apart); "" when the row
// has no target of its own.
func fleetTarget(c ContentionResult) (string, bool) {
	all := c.Writers * c.CommitsEach
	serve := c.Driver == driverServe
	rate := func(cli, srv float64) float64 {
		if serve {
			return srv
		}
		return cli
	}
	switch {
	case c.Mode == modeDisjoint && c.Writers == 10:
		r := rate(50, 100)
		return fmt.Sprintf("≥ %.0f/s, no REMOTE_BUSY", r), c.CommitsPerSec >= r && c.Busy == 0
	case c.Mode == modeDisjoint && c.Writers == 50:
		r := rate(40, 80)
		return fmt.Sprintf("all accepted, no REMOTE_BUSY, ≥ %.0f/s", r), c.Accepted == all && c.Busy == 0 && c.CommitsPerSec >= r
	case c.Mode == modeShared && (c.Writers == 10 || c.Writers == 50):
		return "0 conflicts, every line once", c.Conflicts == 0 && c.Check.OK() && c.Accepted == all
	}
	return "", false
}

// requestsPerCommit is the traffic of a row per accepted commit (0:
// not counted, the file store).
func requestsPerCommit(reqs []OpCount, accepted int) float64 {
	if accepted == 0 || len(reqs) == 0 {
		return 0
	}
	n := 0
	for _, r := range reqs {
		n += r.Requests
	}
	return float64(n) / float64(accepted)
}

// proposalPuts counts the PUTs of proposals (format 4: each a commit's
// own pack; format 3: registrations and lead markers) the proxy saw;
// fold markers are a class of their own (proxy.go).
func proposalPuts(reqs []OpCount) int {
	n := 0
	for _, r := range reqs {
		if strings.HasPrefix(r.Class, "PUT") && strings.HasSuffix(r.Class, " proposals") {
			n += r.Requests
		}
	}
	return n
}

// formatsSection renders the section; "" when no row is of format 4.
func (r *Results) formatsSection() string {
	any4 := false
	for _, c := range r.Contention {
		any4 = any4 || c.Format == 4
	}
	for _, a := range r.Agents {
		any4 = any4 || a.Format == 4
	}
	if !any4 {
		return ""
	}
	load := map[string]Step{}
	for _, st := range r.Steps {
		load[st.Name] = st
	}
	loadCell := func(name string) string {
		st, ok := load[name]
		if !ok {
			return "–"
		}
		return fmt.Sprintf("%.2f → %.2f", st.LoadStart, st.LoadEnd)
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## Format 4 beside format 3\n\n")
	p("Each row on a store of format 3 (seeded by the binary) and of format 4 (seeded by a version-4 commit of an engine in the load generator: "+
		"every process then publishes by version 4, as on any version-4 store). Latency is the accepted commit process's (or tool call's) wall time, "+
		"p50 / p99 / mean by nearest rank. *Uploads / commit*: the commit's own packs uploaded per accepted commit, counted in the store's listing "+
		"(format 3: increment packs and registrations; format 4: proposals, fold markers and group packs apart); on SeaweedFS also the PUTs of "+
		"`proposals/` keys the counting proxy saw. Target: DESIGN §10's row, and ≤ %.1f uploads per accepted commit. "+
		"Load: the 1-minute load average before → after the row.\n\n", maxUploadsPerCommit)
	p("| store | row | format | accepted | commits/s | commit latency p50 / p99 / mean | requests / commit | uploads / commit (listing; proxy PUTs) | REMOTE_BUSY | conflicts | audit | load | target | verdict |\n")
	p("| --- | --- | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | --- | --- | --- | --- |\n")
	uploads := func(listed, accepted int, reqs []OpCount) (string, float64) {
		if accepted == 0 {
			return "–", 0
		}
		u := float64(listed) / float64(accepted)
		s := fmt.Sprintf("%.2f", u)
		if len(reqs) > 0 {
			s += fmt.Sprintf("; %.2f", float64(proposalPuts(reqs))/float64(accepted))
		}
		return s, u
	}
	lat := func(d Dist) string {
		return fmt.Sprintf("%s / %s / %s", fmtDur(d.Median), fmtDur(d.P99), fmtDur(d.Mean))
	}
	reqCell := func(reqs []OpCount, accepted int) string {
		if v := requestsPerCommit(reqs, accepted); v > 0 {
			return fmt.Sprintf("%.1f", v)
		}
		return "–"
	}
	for _, c := range r.Contention {
		f := formatOf(c.Format)
		up, u := uploads(c.Attempts, c.Accepted, c.Requests)
		target, met := fleetTarget(c)
		verdict := "–"
		if target != "" {
			target += fmt.Sprintf("; ≤ %.1f uploads", maxUploadsPerCommit)
			verdict = map[bool]string{true: "met", false: "**missed**"}[met && u <= maxUploadsPerCommit]
		}
		p("| %s | %s, %d writers x %d | %d | %d/%d | %.1f | %s | %s | %s | %d | %d | %s | %s | %s | %s |\n",
			c.Store, withRoots(withDriver(c.Mode, c.Driver), c.PrivateRoots), c.Writers, c.CommitsEach, f, c.Accepted, c.Writers*c.CommitsEach, c.CommitsPerSec,
			lat(c.Commit.Wall), reqCell(c.Requests, c.Accepted), up, c.Busy, c.Conflicts, auditText(c.Check, c.Generations, c.Accepted),
			loadCell(contentionStep(c.Store, c.Mode, c.Writers, withDriverName(c.Driver), f)), target, verdict)
	}
	for _, a := range r.Agents {
		f := formatOf(a.Format)
		for _, ph := range []struct {
			name string
			ph   AgentPhase
		}{{"spread", a.Spread}, {"burst", a.Burst}} {
			up, u := uploads(ph.ph.Attempts, ph.ph.Accepted, ph.ph.Requests)
			rate, target, verdict := "–", "–", "–"
			if ph.ph.Wall > 0 {
				rate = fmt.Sprintf("%.1f", float64(ph.ph.Accepted)/ph.ph.Wall.Seconds())
			}
			if ph.name == "burst" && a.Agents == 100 {
				limit := 2 * time.Second
				if a.Driver == driverServe {
					limit = 1500 * time.Millisecond
				}
				target = fmt.Sprintf("all accepted, last within %s; ≤ %.1f uploads", limit, maxUploadsPerCommit)
				met := ph.ph.Accepted == a.Agents && ph.ph.Wall <= limit && u <= maxUploadsPerCommit
				verdict = map[bool]string{true: "met", false: "**missed**"}[met]
				rate += fmt.Sprintf(" (last after %s)", fmtDur(ph.ph.Wall))
			}
			p("| %s | %s, %d agents %s | %d | %d/%d | %s | %s | %s | %s | %d | %d | %s | %s | %s | %s |\n",
				a.Store, withRoots(withDriver("agents", a.Driver), a.PrivateRoots), a.Agents, ph.name, f, ph.ph.Accepted, a.Agents, rate,
				lat(ph.ph.Commit.Wall), reqCell(ph.ph.Requests, ph.ph.Accepted), up, ph.ph.Busy, ph.ph.Conflicts, auditText(ph.ph.Check, 0, 0),
				loadCell(agentsStep(a.Store, withDriverName(a.Driver), f)), target, verdict)
		}
	}
	p("\n")
	return b.String()
}

// withDriverName is a row's driver as run names it ("" in older results:
// the CLI).
func withDriverName(d string) string {
	if d == "" {
		return driverCLI
	}
	return d
}
