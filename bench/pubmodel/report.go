package pubmodel

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// S3 Standard request prices, dollars per request: PUT, COPY, POST and
// LIST $0.005 per 1,000; GET and HEAD $0.0004 per 1,000; DELETE free.
const (
	pricePut = 0.005 / 1000
	priceGet = 0.0004 / 1000
)

// kindOf maps a request label to its price class.
func priceOf(label string) float64 {
	switch {
	case strings.HasPrefix(label, "GET"), strings.HasPrefix(label, "HEAD"):
		return priceGet
	case strings.HasPrefix(label, "DELETE"):
		return 0
	}
	return pricePut
}

// publicationPath reports whether a label counts on the publication path
// (the rest is catching up, reported on its own row).
func publicationPath(label string) bool {
	return label != "GET catch-up" && label != "GET own generation"
}

// PerCommit returns requests per measured commit by label.
func (r *Result) PerCommit() map[string]float64 {
	out := map[string]float64{}
	if r.Measured == 0 {
		return out
	}
	for k, v := range r.Requests {
		out[k] = v / float64(r.Measured)
	}
	return out
}

// PathRequests is requests per commit on the publication path, then all
// but catching up (judged on its own row), then catching up.
func (r *Result) PathRequests() (path, all, catchUp float64) {
	for k, v := range r.PerCommit() {
		if k == "GET catch-up" {
			catchUp += v
			continue
		}
		all += v
		if publicationPath(k) {
			path += v
		}
	}
	return path, all, catchUp
}

// CostPerMillion is the S3 Standard request cost of a million commits.
func (r *Result) CostPerMillion() float64 {
	var c float64
	for k, v := range r.PerCommit() {
		c += v * priceOf(k)
	}
	return c * 1e6
}

// AcceptedPerSecond over the measured window.
func (r *Result) AcceptedPerSecond() float64 {
	return float64(r.AcceptedInWindow) / r.Config.Measure.Seconds()
}

// LostShare is the share of measured commits' conditional writes refused.
func (r *Result) LostShare() float64 {
	if r.CondSent == 0 {
		return 0
	}
	return float64(r.CondLost) / float64(r.CondSent)
}

// Print writes the report.
func (r *Result) Print(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "protocol %s: %d agents, one commit per %v each, conditional writes %v per key (%s), round trip %v, seed %d\n",
		c.Protocol, c.Agents, c.Window, c.Cond, map[bool]string{false: "queued", true: "429 when held"}[c.Reject], c.RTT, c.Seed)
	fmt.Fprintf(w, "measured %v after %v warm-up: %d commits started, %d accepted in the window\n",
		c.Measure, c.Warmup, r.Measured, r.AcceptedInWindow)
	fmt.Fprintf(w, "accepted/s            %.1f (offered %.1f)\n", r.AcceptedPerSecond(),
		float64(c.Agents)/c.Window.Seconds())
	fmt.Fprintf(w, "latency p50/p99/mean  %v / %v / %v\n", r.P50.Round(1e6), r.P99.Round(1e6), r.Mean.Round(1e6))
	fmt.Fprintf(w, "call p50/p99          %v / %v (from the call's start, not the agent's instant)\n", r.CallP50.Round(1e6), r.CallP99.Round(1e6))
	fmt.Fprintf(w, "cycle                 %v between landings; %d commits queued behind their agent's previous, "+
		"%d of them taken after the write that followed it\n", r.Cycle.Round(1e6), r.Queued, r.QueuedMissed)
	fmt.Fprintf(w, "REMOTE_BUSY           %d; unfinished %d; crashed %d\n", r.Busy, r.Unfinished, r.Crashed)
	fmt.Fprintf(w, "conditional writes    %d sent, %d lost (%.1f%%), %d answered 429\n", r.CondSent, r.CondLost,
		100*r.LostShare(), r.Rejected)
	if r.Writes > 0 {
		fmt.Fprintf(w, "commits per write     %.2f (%d generations, %d writes of current)\n",
			float64(r.Generations)/float64(r.Writes), r.Generations, r.Writes)
	}
	path, all, cu := r.PathRequests()
	fmt.Fprintf(w, "requests per commit   %.2f on the publication path, %.2f in all but catch-up, %.2f catching up\n", path, all, cu)
	pc := r.PerCommit()
	var labels []string
	for k := range pc {
		labels = append(labels, k)
	}
	sort.Strings(labels)
	for _, k := range labels {
		fmt.Fprintf(w, "  %-20s %.2f\n", k, pc[k])
	}
	fmt.Fprintf(w, "cost per million commits at S3 Standard prices: $%.2f\n", r.CostPerMillion())
}
