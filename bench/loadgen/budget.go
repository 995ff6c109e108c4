package main

import (
	"fmt"
	"time"
)

// Budget is the CPU each party of a contention run or agents phase spent
// in its measured window (the writers' start to the last commit's
// answer), so that a throughput row can be read against what the
// machine's cores allow: at T accepted commits/s on C cores, all parties
// together may spend at most C/T of CPU per commit. Linux only (zero
// elsewhere).
type Budget struct {
	Wall time.Duration // the window
	// Writers is the slivingdoc processes' CPU: every CLI process's
	// rusage, or each serve process's whole CPU over the window
	// (background work between calls included, unlike the per-call
	// figures of the latency columns, which it holds and does not add
	// again).
	Writers time.Duration
	Seaweed time.Duration // SeaweedFS's processes (0 on the file store)
	// Loadgen is this process: the drivers' clients, the counting proxy,
	// the CPU clocks read around serve calls.
	Loadgen time.Duration
	// Machine is every core's busy time (/proc/stat); what it holds beyond
	// the parties above is the kernel's work for no one process and
	// whatever else ran on the machine.
	Machine time.Duration
	Cores   int
}

// Others is the machine's busy time not spent by the run's parties.
func (b Budget) Others() time.Duration {
	return max(0, b.Machine-b.Writers-b.Seaweed-b.Loadgen)
}

// perCommit divides d by n accepted commits.
func perCommit(d time.Duration, n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return d / time.Duration(n)
}

// budgetText renders a budget per accepted commit: each party's CPU, the
// parties' sum, the CPU the window offered per commit (cores × wall), and
// the rate at which the parties' sum would fill the cores.
func budgetText(b Budget, accepted int) string {
	if b.Wall <= 0 || accepted <= 0 {
		return "not measured"
	}
	ours := b.Writers + b.Seaweed + b.Loadgen
	pc := func(d time.Duration) string { return fmtDur(perCommit(d, accepted)) }
	limit := 0.0
	if o := perCommit(ours, accepted); o > 0 {
		limit = float64(b.Cores) / o.Seconds()
	}
	return fmt.Sprintf("writers %s, SeaweedFS %s, load generator %s, sum %s; others %s; offered %s (%d cores × %s); the sum alone allows %.0f/s",
		pc(b.Writers), pc(b.Seaweed), pc(b.Loadgen), pc(ours), pc(b.Others()),
		pc(time.Duration(b.Cores)*b.Wall), b.Cores, fmtDur(b.Wall), limit)
}

// unproxiedText marks a row whose writers bypassed the counting proxy.
func unproxiedText(unproxied bool) string {
	if unproxied {
		return ", writers not through the counting proxy"
	}
	return ""
}
