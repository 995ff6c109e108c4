package fleetsim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// markdownV4 renders the publish mode's own table: requests per measured
// commit split into the publication path and catch-up, the conditional
// writes, the generation audit, and the trace of one slow commit.
func markdownV4(runs []*Result) string {
	var b strings.Builder
	b.WriteString("\nFormat v4 (publish mode): requests per measured accepted commit, the publication path apart from catch-up; conditional writes of `current`; the generations the agents were told:\n\n")
	b.WriteString("| agents | arrival | warm-up | measured | commits/s | latency p50 / p90 / p99 / mean / max | versions per commit | publication path | catch-up | all | conditional writes sent / lost (%) | commits per won write | $ / million | generations audit |\n")
	b.WriteString("| ---: | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |\n")
	for _, r := range runs {
		if r.Engine != EnginePublish {
			continue
		}
		c, cu := r.Counts, r.CatchUp
		sent, lost := c.Conditional(), c.Lost[KindCreate]+c.Lost[KindReplace]
		pct := 0.0
		if sent > 0 {
			pct = 100 * float64(lost) / float64(sent)
		}
		l := r.Latency
		fmt.Fprintf(&b, "| %d | %s | %v | %d | %.1f | %s / %s / %s / %s / %s | %.2f | %.2f | %.2f | %.2f | %d / %d (%.1f%%) | %.2f | %s | %s |\n",
			r.Agents, arrival(r), r.Warmup, r.MeasuredAccepted, r.CommitsPerSec,
			ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Mean), ms(l.Max), float64(r.Versions)/float64(max(r.Accepted, 1)),
			r.PerCommit(c.Total()-cu.Total()), r.PerCommit(cu.Total()), r.PerCommit(c.Total()),
			sent, lost, pct, r.CommitsPerConditional(), dollars(r.S3DollarsPerMillion), genAuditText(r.GenAudit))
	}
	b.WriteString("\nBy object, per measured accepted commit (publication path | catch-up):\n\n")
	for _, r := range runs {
		if r.Engine != EnginePublish {
			continue
		}
		fmt.Fprintf(&b, "- %d agents, %s: path", r.Agents, arrival(r))
		for _, k := range slices.Sorted(maps.Keys(r.Counts.ByClass)) {
			if n := r.Counts.ByClass[k] - r.CatchUp.ByClass[k]; n > 0 {
				fmt.Fprintf(&b, " · %s %.2f", k, r.PerCommit(n))
			}
		}
		b.WriteString(" | catch-up")
		for _, k := range slices.Sorted(maps.Keys(r.CatchUp.ByClass)) {
			fmt.Fprintf(&b, " · %s %.2f", k, r.PerCommit(r.CatchUp.ByClass[k]))
		}
		b.WriteString("\n")
	}
	for _, r := range runs {
		b.WriteString(markdownBreakdown(r))
	}
	for _, r := range runs {
		if len(r.SlowTrace) > 0 {
			fmt.Fprintf(&b, "\nTrace of the first slow commit (%d agents; model seconds since the clock's start):\n\n```\n%s\n```\n", r.Agents, strings.Join(r.SlowTrace, "\n"))
		}
	}
	return b.String()
}

func genAuditText(g GenAudit) string {
	if g.OK() {
		return fmt.Sprintf("ok (%d distinct, each its own ID)", g.Distinct)
	}
	return fmt.Sprintf("FAILED: %d reported, %d distinct, %d generations added, %d naming another ID, %d IDs twice", g.Reported, g.Distinct, g.Added, g.WrongID, g.DuplicateID)
}
