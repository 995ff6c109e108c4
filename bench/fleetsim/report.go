package fleetsim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Markdown renders runs as two tables (outcome and latency; requests per
// accepted commit by kind) and the model they ran under.
func Markdown(runs []*Result) string {
	var b strings.Builder
	if len(runs) > 0 {
		m := runs[0].Model
		fmt.Fprintf(&b, "Model: round trip %v, jitter ±%.0f%%, conditional write holds its key %v, bandwidth %s per request, time scale %gx (figures in model time). Engines on the real clock; the simulation's own CPU over the run's real time is the *cores* column (all engines' work, which a real fleet spreads over its machines; *CPU / commit* is that CPU per accepted commit), the machine's 1-minute load average at start and end the *load* column.\n\n",
			m.RTT, 100*m.Jitter, m.CondService, bandwidth(m.Bandwidth), m.Scale)
	}
	b.WriteString("| agents | arrival | accepted | REMOTE_BUSY | gave up | other | generations | commits/s (offered) | commits per won write of current | commit latency p50 / p90 / p99 / max | call p50 / p99 | cores | CPU / commit | load | audit |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- | --- | ---: | ---: | --- | --- |\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "| %d | %s | %d / %d | %d | %d | %s | %d | %.1f (%.1f) | %.2f | %s / %s / %s / %s | %s / %s | %.2f | %s | %s | %s |\n",
			r.Agents, arrival(r), r.Accepted, r.Offered, r.Busy, r.GaveUp, other(r.Other), r.Generations,
			r.CommitsPerSec, r.OfferedPerSec, r.CommitsPerConditional(),
			ms(r.Latency.P50), ms(r.Latency.P90), ms(r.Latency.P99), ms(r.Latency.Max),
			ms(r.CallLatency.P50), ms(r.CallLatency.P99), r.CoresBusy(), ms(time.Duration(r.PerCommit(int64(r.CPU)))), loadText(r.Load), auditText(r.Audit))
	}
	b.WriteString("\nRequests per accepted commit (conditional writes: won + lost), and what they cost per million accepted commits at S3 Standard request prices ($0.005 per 1,000 PUT, COPY, POST or LIST, conditional writes included; $0.0004 per 1,000 GET or HEAD; DELETE free):\n\n")
	b.WriteString("| agents | arrival | total | $ / million commits | GET (current) | PUT | CREATE | REPLACE won + lost | LIST | HEAD | DELETE | KiB up | KiB down |\n")
	b.WriteString("| ---: | --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range runs {
		c := r.Counts
		pc := func(k Kind) string { return fmt.Sprintf("%.2f", r.PerCommit(c.Requests[k])) }
		fmt.Fprintf(&b, "| %d | %s | %.2f | %s | %s (%.2f) | %s | %s | %.2f + %.2f | %s | %s | %s | %.1f | %.1f |\n",
			r.Agents, arrival(r), r.PerCommit(c.Total()), dollars(r.S3DollarsPerMillion), pc(KindGet), r.PerCommit(c.CurrentGets), pc(KindPut), pc(KindCreate),
			r.PerCommit(c.Won[KindReplace]), r.PerCommit(c.Lost[KindReplace]), pc(KindList), pc(KindHead), pc(KindDelete),
			r.PerCommit(c.BytesUp)/1024, r.PerCommit(c.BytesDown)/1024)
	}
	b.WriteString("\nRequests per accepted commit by object (absent: a GET that found nothing):\n\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "- %d agents, %s:", r.Agents, arrival(r))
		for i, k := range slices.Sorted(maps.Keys(r.Counts.ByClass)) {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(&b, "%s %s %.2f", sep, k, r.PerCommit(r.Counts.ByClass[k]))
		}
		b.WriteString("\n")
	}
	if slices.ContainsFunc(runs, func(r *Result) bool { return r.Engine == EnginePublish }) {
		b.WriteString(markdownV4(runs))
	}
	return b.String()
}

func arrival(r *Result) string {
	how := "random"
	if r.Burst {
		how = "burst"
	}
	eng := "serve-like"
	if r.Engine == EnginePublish {
		eng = "format v4 (publish)"
		if r.CatchUpPolicy == CatchUpLazy {
			eng += ", lazy catch-up"
		}
	}
	if r.EnginePerCommit {
		eng = "engine per commit"
	}
	return fmt.Sprintf("%s, %d x %v, %s", how, r.Windows, r.Window, eng)
}

// dollars prints an amount to the cent.
func dollars(d float64) string { return fmt.Sprintf("$%.2f", d) }

func bandwidth(bps int64) string {
	if bps <= 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%.0f MB/s", float64(bps)/1e6)
}

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func other(m map[string]int) string {
	if len(m) == 0 {
		return "—"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func auditText(a Audit) string {
	if a.OK() {
		return fmt.Sprintf("ok (%d lines)", a.Expected)
	}
	return fmt.Sprintf("FAILED: %d lost, %d duplicated, %d unknown of %d", len(a.Lost), len(a.Duplicated), len(a.Unknown), a.Expected)
}

func loadText(l []float64) string {
	var parts []string
	for _, v := range l {
		parts = append(parts, fmt.Sprintf("%.1f", v))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " → ")
}
