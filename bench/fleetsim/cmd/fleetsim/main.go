// Command fleetsim runs the fleet simulation of package fleetsim (many
// engines in one process on the mem store behind a latency model) for one
// or more fleet sizes and prints the Markdown tables; -json writes the raw
// results. `make bench-fleet` runs it at 100 and 1,000 agents.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slivingdoc/slivingdoc/bench/fleetsim"
)

func main() {
	agents := flag.String("agents", "100,1000", "comma-separated fleet sizes, one run each")
	windows := flag.Int("windows", 1, "commits per agent, one at a random instant of each window")
	window := flag.Duration("window", time.Minute, "the window (model time): agents/window is the offered rate")
	burst := flag.Bool("burst", false, "every agent commits at the start of each window")
	rtt := flag.Duration("rtt", 20*time.Millisecond, "round trip of every request (model time)")
	jitter := flag.Float64("jitter", 0.25, "each leg uniform in [1-j, 1+j] of its nominal time")
	cond := flag.Duration("cond-service", 2*time.Millisecond, "time a conditional write holds its key (serialised per key)")
	bw := flag.Int64("bandwidth", 100e6, "bytes per second one request moves (0 = unlimited)")
	scale := flag.Float64("scale", 1, "time compression: sleeps are model durations / scale, reports multiply back (below 1: slow motion)")
	seed := flag.Uint64("seed", 1, "seed of the instants, jitter and contents")
	flag.Int("commit-retries", 8, "no longer used: a version-4 commit has no lost-race retries to count (ignored with a warning)")
	maxTries := flag.Int("max-tries", 20, "Commit calls an agent spends on one commit")
	capRun := flag.Duration("cap", 10*time.Minute, "no new call starts this long after the last instant (model time)")
	perCommit := flag.Bool("engine-per-commit", false, "a fresh engine per Commit call, as the CLI (default: one engine per agent, as serve)")
	dir := flag.String("dir", "", "parent directory of the run's L and P directories (default: the temporary directory; 1,000 agents write ~4 GB there)")
	// The engines' publication modes are gone (every commit takes one
	// path): these flags are accepted so that the commands recorded in
	// docs/benchmarks.md still run, and warn.
	flag.Bool("group-commit", true, "no longer used: the engines have no modes (ignored with a warning)")
	flag.Int("machines", 0, "no longer used: the engines of one machine no longer take turns (ignored with a warning)")
	engine := flag.String("engine", "", "what commits: empty for the real engines (server.Engine), \"publish\" for agents calling the format-v4 protocol (package publish) directly")
	warmup := flag.Duration("warmup", 0, "publish engine: commits whose instant is in this first part of the run, and the requests before it, are not measured (model time)")
	traceSlow := flag.Duration("trace-slow", 0, "publish engine: print the protocol's trace of the first commit slower than this (model time; 0: none)")
	breakdown := flag.Duration("breakdown", 0, "publish engine: report where the measured commits' time went, for all and for those slower than this (0: no report)")
	catchUp := flag.String("catch-up", "", "publish engine: empty to fetch every pack the manifest names since the agent's generation, \"lazy\" to fetch only what the build and the fold read")
	gather := flag.Duration("gather", 0, "publish engine, diagnosis only: the protocol's gather instead of its default (5 round trips and a poll)")
	foldParallel := flag.Int("fold-parallel", 0, "publish engine, diagnosis only: proposals a fold reads at once instead of the protocol's default (32)")
	jsonOut := flag.String("json", "", "also write the raw results to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the runs (set-up included) to this file")
	debugAddr := flag.String("debug-addr", "", "serve net/http/pprof on this loopback address (e.g. 127.0.0.1:6060) to see where a run's engines wait")
	flag.Parse()
	if *debugAddr != "" {
		go func() { log.Println(http.ListenAndServe(*debugAddr, nil)) }()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lg := log.New(os.Stderr, "fleetsim: ", log.Ltime)
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "group-commit", "machines":
			lg.Printf("warning: -%s is no longer used and is ignored: the engines publish by one path, with no modes to choose", f.Name)
		case "commit-retries":
			lg.Printf("warning: -%s is no longer used and is ignored: a commit folds again after a lost write until it is accepted, with no retries to count", f.Name)
		}
	})
	var runs []*fleetsim.Result
	for _, f := range strings.Split(*agents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			lg.Fatalf("bad fleet size %q", f)
		}
		cfg := fleetsim.Config{
			Agents: n, Windows: *windows, Window: *window, Burst: *burst, Seed: *seed,
			Model:    fleetsim.Model{RTT: *rtt, Jitter: *jitter, CondService: *cond, Bandwidth: *bw, Scale: *scale},
			MaxTries: *maxTries, Cap: *capRun, Dir: *dir, EnginePerCommit: *perCommit,
			Engine: *engine, Warmup: *warmup, TraceSlow: *traceSlow, Breakdown: *breakdown, CatchUp: *catchUp, Gather: *gather, FoldParallel: *foldParallel,
			Progress: func(format string, args ...any) { lg.Printf("%d agents: "+format, append([]any{n}, args...)...) },
		}
		lg.Printf("%d agents ...", n)
		r, err := fleetsim.Run(ctx, cfg)
		if err != nil {
			lg.Fatalf("%d agents: %v", n, err)
		}
		lg.Printf("%d agents: %d accepted, real %v, CPU %v, open-file limit %d", n, r.Accepted, r.Real.Round(time.Millisecond), r.CPU.Round(time.Millisecond), r.FileLimit)
		for k, c := range r.OtherCause {
			lg.Printf("%d agents: first cause of %s: %s", n, k, c)
		}
		runs = append(runs, r)
	}
	fmt.Print(fleetsim.Markdown(runs))
	if *jsonOut != "" {
		data, err := json.MarshalIndent(runs, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonOut, append(data, '\n'), 0o644)
		}
		if err != nil {
			lg.Fatal(err)
		}
	}
	for _, r := range runs {
		if !r.Audit.OK() {
			lg.Fatalf("%d agents: line audit failed: %+v", r.Agents, r.Audit)
		}
		if r.Engine == fleetsim.EnginePublish && !r.GenAudit.OK() {
			lg.Fatalf("%d agents: generation audit failed: %+v", r.Agents, r.GenAudit)
		}
	}
}
