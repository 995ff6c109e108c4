//go:build unix

// Command chaos is the fault campaign (issue 10): K writer agents commit to
// one notebook through the built slivingdoc binary while faults strike at
// random moments, and at the end nothing accepted or written is lost.
//
// Data flow, per store (the file store, then SeaweedFS via internal/seaweed):
//
//	campaign.setup   store (+ faultProxy in front of SeaweedFS), a small
//	                 tmpfs holding writer 0's private root, env
//	seedNotebook     publish shared.md (one section per writer) and wNN.md
//	                 (by an engine of this program, bench.SeedV4)
//	writer loops     each: pull, or add a token line + commit; one process
//	                 per operation; journal WRITE before the edit, OK after
//	                 an OK commit (fsynced)
//	fault loop       schedule(seed) -> events: kill-writer (SIGKILL the
//	                 running process), store-outage (stop or crash
//	                 SeaweedFS, restart), store-freeze (SIGSTOP past the
//	                 S3 response timeout), slow-store (proxy delays),
//	                 disk-full (fill the tmpfs), corrupt-cache (flip a byte
//	                 of a cached pack), kill-at-failpoint (die at one
//	                 engine failpoint), kill-twice (two commits of one
//	                 writer die in a row inside a rewrite of L, then it
//	                 commits plainly; double.go); each must demonstrably fire
//	check            outage rule; settle (every writer commits until OK);
//	                 fresh pull; `slivingdoc verify`; judge(journals,
//	                 fresh tree, writers' directories)
//	report           figures on stdout, Markdown summary with -summary
//
// Per operation: it ends within -op-bound, and an error is a documented
// code·reason with its documented action and retryability
// (diag.Catalog); one that ran entirely while SeaweedFS was down or
// frozen ends STORAGE_FAILURE, retryable, RETRY. Every scheduled fault must
// demonstrably fire. The seed is printed; -seed replays the same schedule.
// The disk-full fault needs a tmpfs mount (root); elsewhere it is left out
// and the run says so.
// A writer refused BASELINE_LOST takes the documented way out (lost.go);
// the first foreign conflicts of each writer keep L and P's directory
// state before and after, with its recent operations (forensics.go).
// -group-commit is accepted and ignored with a warning: the product has
// no publication modes any more. The notebook is seeded by a commit of an
// engine in this program (bench.SeedV4); every process publishes by
// format 4, the only one written (-format 3 is accepted with a warning
// and runs as 4).
// Exit status: 0 all rules held, 1 a rule failed, 2 the campaign could not
// run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type config struct {
	seed            uint64
	writers         int
	rounds          int           // fault events per store
	duration        time.Duration // cap on each store's fault phase (0: none)
	opBound         time.Duration
	stores          []string
	bin             string
	work            string
	keep            bool
	summary         string
	diskMB          int
	checkpointPacks int
	verbose         bool
	fpBin           string // the failpoints build (built into the work dir)
	format          int    // the store's format version: 3 (seeded by the binary) or 4 (seeded by a version-4 commit; seedNotebook)
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		os.Exit(2)
	}
	os.Exit(campaignMain(cfg))
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	var cfg config
	var stores string
	fs.Uint64Var(&cfg.seed, "seed", 0, "random seed (0: draw one); the same seed replays the same schedule")
	fs.IntVar(&cfg.writers, "writers", 4, "writer agents per store")
	fs.IntVar(&cfg.rounds, "rounds", 40, "fault events per store")
	fs.DurationVar(&cfg.duration, "duration", 0, "cap on each store's fault phase (0: run every round); never cuts the first event of each kind")
	fs.DurationVar(&cfg.opBound, "op-bound", 60*time.Second, "time bound of one operation")
	fs.StringVar(&stores, "stores", "file,seaweedfs", "stores to run against, in order")
	fs.StringVar(&cfg.bin, "bin", "", "slivingdoc binary (default: build ./cmd/slivingdoc into the work dir)")
	fs.StringVar(&cfg.fpBin, "failpoints-bin", "", "slivingdoc built with -tags failpoints, for kill-at-failpoint (default: build it into the work dir)")
	fs.StringVar(&cfg.work, "work", "", "work directory (default: a fresh temporary one, removed after a passing run)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the work directory even after a passing run")
	fs.StringVar(&cfg.summary, "summary", "", "write the Markdown summary to this file")
	fs.IntVar(&cfg.diskMB, "disk-mb", 64, "size of the small disk (tmpfs) under writer 0's private root")
	fs.IntVar(&cfg.checkpointPacks, "checkpoint-packs", 24, "SLIVINGDOC_CHECKPOINT_PACKS of every process: low, so checkpoints and cleanup run under faults too")
	fs.BoolVar(&cfg.verbose, "v", false, "print sample log lines behind each error code")
	fs.Bool("group-commit", true, "no longer used: slivingdoc has no publication modes (ignored with a warning)")
	fs.IntVar(&cfg.format, "format", 4, "the store's format version: 4, the only one written (3 is accepted with a warning and runs as 4)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "group-commit" {
			fmt.Fprintln(os.Stderr, "chaos: warning: -group-commit is no longer used and is ignored: slivingdoc publishes by one path, with no modes to choose")
		}
	})
	if cfg.writers < 1 || cfg.rounds < 1 || cfg.opBound <= 0 || cfg.diskMB < 1 || cfg.checkpointPacks < 1 {
		return cfg, errors.New("-writers, -rounds, -op-bound, -disk-mb and -checkpoint-packs must be positive")
	}
	switch cfg.format {
	case 3:
		// Every commit publishes by format 4 now: a campaign "at format
		// 3" would run format 4 under another name.
		fmt.Fprintln(os.Stderr, "chaos: warning: -format 3 is no longer written (every commit publishes by format 4): the campaign runs at format 4")
		cfg.format = 4
	case 4:
	default:
		return cfg, fmt.Errorf("-format %d: the only store format written is 4", cfg.format)
	}
	for _, s := range strings.Split(stores, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.stores = append(cfg.stores, s)
		}
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())&(1<<53-1) | 1
	}
	return cfg, nil
}

func campaignMain(cfg config) int {
	fmt.Printf("chaos: seed %d\nreplay: go run ./bench/chaos %s\n", cfg.seed, replayArgs(cfg))
	if os.Geteuid() != 0 {
		fmt.Printf("chaos: not root: the disk-full fault needs a tmpfs mount and is left out\n")
	}
	temp := cfg.work == ""
	if temp {
		dir, err := os.MkdirTemp("", "slivingdoc-chaos-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
			return 2
		}
		cfg.work = dir
	}
	cfg.work, _ = filepath.Abs(cfg.work)
	if cfg.bin == "" {
		cfg.bin = filepath.Join(cfg.work, "slivingdoc")
		out, err := exec.Command("go", "build", "-o", cfg.bin, "github.com/slivingdoc/slivingdoc/cmd/slivingdoc").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos: build slivingdoc: %v\n%s", err, out)
			return 2
		}
	}
	cfg.bin, _ = filepath.Abs(cfg.bin)
	if cfg.fpBin == "" {
		fp, err := failpointBinary(cfg.work)
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
			return 2
		}
		cfg.fpBin = fp
	}
	cfg.fpBin, _ = filepath.Abs(cfg.fpBin)

	var all []*stats
	broken := false
	for i, store := range cfg.stores {
		c := newCampaign(cfg, store, uint64(i+1))
		fmt.Printf("chaos: %s: %d writers, %d rounds\n", store, cfg.writers, cfg.rounds)
		if err := c.run(); err != nil {
			c.st.fail("campaign could not complete: %v", err)
			broken = true
		}
		all = append(all, c.st)
		fmt.Print(textReport(c.st, cfg.verbose))
	}
	md := markdownReport(cfg, all, time.Now().UTC())
	if cfg.summary != "" {
		if err := os.WriteFile(cfg.summary, []byte(md), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
			return 2
		}
	}
	failed := 0
	for _, s := range all {
		failed += len(s.failures) + len(s.unfired)
		for _, k := range s.kindsScheduled() {
			if s.fired[k] == 0 {
				failed++
			}
		}
	}
	if failed > 0 || broken {
		fmt.Printf("chaos: FAIL (seed %d; work dir kept: %s)\n", cfg.seed, cfg.work)
		if broken {
			return 2
		}
		return 1
	}
	if temp && !cfg.keep {
		os.RemoveAll(cfg.work)
	}
	fmt.Printf("chaos: PASS (seed %d)\n", cfg.seed)
	return 0
}

func replayArgs(cfg config) string {
	args := fmt.Sprintf("-seed %d -writers %d -rounds %d -stores %s", cfg.seed, cfg.writers, cfg.rounds, strings.Join(cfg.stores, ","))
	if cfg.duration > 0 {
		args += fmt.Sprintf(" -duration %s", cfg.duration)
	}
	return args
}
