// Command pubmodel runs the publication model (bench/pubmodel) for one
// fleet and prints accepted commits per second, commit latency, requests
// per commit by kind, conditional writes lost and the S3 request cost.
//
//	go run ./bench/pubmodel/cmd/pubmodel -agents 1000 -rate 1/min -cond 200ms
//	go run ./bench/pubmodel/cmd/pubmodel -agents 100 -rate 1/2s -cond 1s -warmup 1m -measure 5m
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/bench/pubmodel"
)

func main() {
	var cfg pubmodel.Config
	rate := flag.String("rate", "1/min", "commits per agent: 1/<duration or min, s>: one at a uniform instant of every such window")
	flag.IntVar(&cfg.Agents, "agents", 1000, "agents")
	flag.DurationVar(&cfg.Cond, "cond", 200*time.Millisecond, "a conditional write holds its key this long, won or lost")
	flag.DurationVar(&cfg.RTT, "rtt", 20*time.Millisecond, "round trip of every request")
	flag.DurationVar(&cfg.Warmup, "warmup", time.Minute, "model time before measuring")
	flag.DurationVar(&cfg.Measure, "measure", 2*time.Minute, "model time measured")
	flag.BoolVar(&cfg.Reject, "reject", false, "a conditional write that finds its key held is answered 429 at once")
	flag.Float64Var(&cfg.Conflict, "conflict", 0, "probability that a proposal does not merge onto a fold that moved")
	flag.Float64Var(&cfg.CrashP, "crash", 0, "probability that a writer dies at a request")
	flag.Float64Var(&cfg.AmbigP, "ambiguous", 0, "probability that a conditional write's reply is lost")
	seed := flag.Uint64("seed", 1, "the one seed of the run")
	proto := flag.String("protocol", "both", "v4, today or both")
	gather := flag.Duration("gather", -1, "v4: a folder's wait after the write it saw landed (-1: the design's)")
	chain := flag.Bool("chain", false, "v4: a commit queued behind its agent's pending commit registers chained to it")
	turn := flag.Duration("turn", 0, "v4: the folder's own work between its last reply and its uploads")
	flag.Parse()
	cfg.Params = pubmodel.DefaultParams(cfg.Cond, cfg.RTT)
	cfg.Params.Conflict = cfg.Conflict
	cfg.Params.Chain, cfg.Params.Turn = *chain, *turn
	if *gather >= 0 {
		cfg.Params.Gather = *gather
	}
	cfg.Seed = *seed
	w, err := parseRate(*rate)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pubmodel:", err)
		os.Exit(2)
	}
	cfg.Window = w
	protos := []string{*proto}
	if *proto == "both" {
		protos = []string{"v4", "today"}
	}
	failed := false
	for i, p := range protos {
		if i > 0 {
			fmt.Println()
		}
		c := cfg
		c.Protocol = p
		r, err := pubmodel.Run(c)
		r.Print(os.Stdout)
		if err != nil {
			fmt.Println("AUDIT FAILED:", err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// parseRate reads "1/min", "1/2s", "1/500ms": one commit per window.
func parseRate(s string) (time.Duration, error) {
	n, per, ok := strings.Cut(s, "/")
	if !ok || n != "1" {
		return 0, fmt.Errorf("rate %q: want 1/<window>", s)
	}
	switch per {
	case "min":
		return time.Minute, nil
	case "s":
		return time.Second, nil
	}
	if d, err := time.ParseDuration(per); err == nil && d > 0 {
		return d, nil
	}
	if v, err := strconv.Atoi(per); err == nil && v > 0 {
		return time.Duration(v) * time.Second, nil
	}
	return 0, fmt.Errorf("rate %q: bad window", s)
}
