// Command loadgen is slivingdoc's system benchmark: it drives the built
// slivingdoc binary as separate processes, the way agents and people run
// it, against the file store and against SeaweedFS on loopback (started
// with the project's internal/seaweed tooling), and writes a dated report
// with SVG charts. `make bench-system` runs it.
//
// Data flow:
//
//	flags ─▶ profile (quick | full) ─▶ runner
//	runner: the slivingdoc binary (built unless -bin), a work directory,
//	        the store targets: file (a directory per notebook) and
//	        seaweedfs (a key prefix per notebook; a counting reverse proxy
//	        on 127.0.0.1 in front of it for the requests workload)
//	workloads, each on fresh notebook locations, each a whole-process run
//	  of the CLI measured by wall time and the child's rusage (CPU, max RSS):
//	  requests+floor  requests and bytes per operation through the proxy;
//	                  the floor: GET + PUT + conditional PUT by a bare SDK
//	                  client, and the startup of a slivingdoc process
//	  latency         N files x 2 KB: 1 KiB append + commit, no-op commit,
//	                  no-op pull; git status / git commit -a on a copy
//	  history         successive commits; first 10 vs last 10; cold and
//	                  warm pulls of the grown notebook
//	  bytes           1 KiB appends to a 1 MiB file, store bytes listed
//	                  after each; 1,000 files then one-line commits, the
//	                  store's size; both by kind of object
//	  merge           merge-file against git merge-file -p, 1 and 5 MB
//	  contention      N writers (own directory; one private root shared by
//	                  all, or one each: -private-roots) racing, disjoint
//	                  files or one shared file; audit of every line
//	  agents          100 agents x 1 commit spread over a window, then a burst
//	  (contention and agents: the CPU of each party over the run's window,
//	  budget.go: the writers, SeaweedFS, this process with its proxy, the
//	  cores' busy time; per accepted commit beside what the cores offered)
//	─▶ Results ─▶ report.go: <out>/<date>.md (tables, DESIGN §10 verdicts),
//	              svg.go: <date>-*.svg, and <date>.json (the raw figures);
//	              SeaweedFS traffic priced at S3 Standard's (cost.go)
//
// The line audit (linecheck.go) is what makes contention a correctness
// test too: every writer tags its lines, and the final notebook must hold
// every accepted line exactly once.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/slivingdoc/slivingdoc/bench"
	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// profile sizes every workload.
type profile struct {
	name              string
	sizes             []int // latency notebook sizes (files)
	latencyReps       int
	latencyStores     []string
	historyFiles      int
	historyCommits    int
	historyStores     []string
	historyAlternate  int // commits alternated with a fresh notebook after the history (workload_history.go)
	coldPulls         int
	warmPulls         int
	bytesAppends      int // 1 KiB appends to the 1 MiB file (workload_bytes.go)
	storeFiles        int // files of 2 KB committed at once, then
	storeCommits      int // one-line commits, for the store's size
	floorReps         int
	mergeSizes        []int
	mergeReps         int
	writers           []int // disjoint files
	sharedWriters     []int // one shared file
	contentionCommits int
	contentionStores  []string
	contentionTimeout time.Duration // per run; writers still busy then are reported unfinished
	agents            int
	agentWindow       time.Duration
	agentStores       []string
	drivers           []string // contention and agents: driverCLI, driverServe (mcp.go)
	// formats are the store format versions contention and agents run on,
	// each row once per format in this order: 3 (what the binary writes
	// on a new store) and 4 (a store seeded by a version-4 commit, on
	// which every process publishes by version 4; setupActors).
	formats []int
	modes   []string // contention modes to run (main: all three unless -modes)
	// privateRoots is where the writers of a contention or agents row
	// keep their private state: rootsShared or rootsOwn (notebook.go).
	privateRoots string
	// unproxied sends the contention and agents writers' requests to
	// SeaweedFS directly, not through the counting proxy: their rows then
	// count no requests, and the proxy's CPU is not on the cores.
	unproxied bool
}

var (
	both   = []string{"file", "seaweedfs"}
	onlyS3 = []string{"seaweedfs"}
)

// profiles: quick fits `make bench-system` in under 15 minutes on 2 cores;
// full is what the report quotes when there is time.
var profiles = map[string]profile{
	"quick": {
		name: "quick", sizes: []int{100, 1000, 10000}, latencyReps: 10, latencyStores: both,
		historyFiles: 1000, historyCommits: 200, historyStores: onlyS3, historyAlternate: 20, coldPulls: 3, warmPulls: 10,
		bytesAppends: 200, storeFiles: 1000, storeCommits: 200, floorReps: 30, mergeSizes: []int{1 << 20, 5 << 20}, mergeReps: 3,
		writers: []int{10, 50, 100}, sharedWriters: []int{10, 50}, contentionCommits: 10,
		contentionStores: onlyS3, contentionTimeout: 2 * time.Minute,
		agents: 100, agentWindow: 60 * time.Second, agentStores: onlyS3, drivers: allDrivers,
	},
	"full": {
		name: "full", sizes: []int{100, 1000, 10000}, latencyReps: 30, latencyStores: both,
		historyFiles: 1000, historyCommits: 200, historyStores: both, historyAlternate: 30, coldPulls: 5, warmPulls: 30,
		bytesAppends: 200, storeFiles: 1000, storeCommits: 200, floorReps: 100, mergeSizes: []int{1 << 20, 5 << 20}, mergeReps: 7,
		writers: []int{10, 50, 100}, sharedWriters: []int{10, 50, 100}, contentionCommits: 10,
		contentionStores: both, contentionTimeout: 5 * time.Minute,
		agents: 100, agentWindow: 60 * time.Second, agentStores: both, drivers: allDrivers,
	},
}

var allDrivers = []string{driverCLI, driverServe}

var allWorkloads = []string{"requests", "latency", "history", "bytes", "merge", "contention", "agents"}

// runner holds what every workload shares.
type runner struct {
	bin    string
	work   string
	prof   profile
	stores map[string]*storeTarget
	srv    *seaweed.Server
	log    *log.Logger
	// sabotage, when set (tests), runs after the contention writers finish
	// and before the audit: it may change the notebook behind their back.
	sabotage func(ctx context.Context, st *storeTarget, loc string, actors []*actor) error
}

// tempDir makes a row's directory under the run's work directory. Rows
// do not remove theirs: the whole work directory goes at the end of the
// run. Removing thousands of files just before the next row starts would
// bill that row for the clean-up: on a file system without a journal (ext4
// as on the measuring VMs), creating a file skips every inode of its block
// group freed in the last minute or more, and a row creates a dozen files
// per commit.
func (r *runner) tempDir(name string) string {
	d, err := os.MkdirTemp(r.work, name+"-")
	if err != nil {
		panic(err) // the work directory is ours; failing here means the disk is gone
	}
	return d
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == spawnerArg {
		spawnerMain()
		return
	}
	// Before anything grows this process: see spawner.go.
	sp, err := startSpawner()
	if err != nil {
		log.Fatalf("loadgen: spawner: %v", err)
	}
	procSpawner = sp
	defer sp.close()
	quick := flag.Bool("quick", false, "the quick profile (same as -profile quick)")
	profName := flag.String("profile", "full", "workload sizes: quick or full")
	bin := flag.String("bin", "", "the slivingdoc binary to measure (default: build ./cmd/slivingdoc)")
	out := flag.String("out", "bench/results", "directory of the report, charts and raw JSON")
	workloads := flag.String("workloads", strings.Join(allWorkloads, ","), "comma-separated workloads to run")
	stores := flag.String("stores", "file,seaweedfs", "comma-separated stores to allow")
	reps := flag.Int("reps", 0, "override the latency repetitions")
	sizes := flag.String("sizes", "", "override the latency notebook sizes, e.g. 100,1000")
	writers := flag.String("writers", "", "override the contention writer counts, e.g. 10,50")
	agents := flag.Int("agents", 0, "override the number of agents")
	window := flag.Duration("agent-window", 0, "override the agents' spread window")
	historyCommits := flag.Int("history-commits", 0, "override the history length")
	historyAlternate := flag.Int("history-alternate", -1, "override how many commits alternate between the long notebook and a fresh reference (0: none)")
	capRun := flag.Duration("contention-timeout", 0, "override the time cap of one contention run")
	// slivingdoc's publication modes are gone (every commit takes one
	// path): these flags are accepted so that the commands recorded in
	// docs/benchmarks.md still run, and warn.
	retired := []string{"group-commit", "local-turns", "turn-offers"}
	for _, name := range retired {
		flag.Bool(name, true, "no longer used: slivingdoc has no publication modes (ignored with a warning)")
	}
	drivers := flag.String("drivers", "", "override the drivers of contention and agents: cli (a process per call), serve (long-lived MCP stdio servers)")
	modes := flag.String("modes", "", "override the contention modes, e.g. disjoint,shared (default: disjoint, shared, shared-sections)")
	formats := flag.String("format", "4", "store format version of the contention and agents rows: 4, the only one slivingdoc writes (3 is accepted with a warning and runs as 4)")
	roots := flag.String("private-roots", rootsShared, "private roots of the contention and agents writers: shared (one per store location, as one user's agents on one machine) or own (one per writer, as one host per writer)")
	unproxied := flag.Bool("unproxied", false, "contention and agents writers talk to SeaweedFS directly, not through the counting proxy (no request counts; the proxy's CPU off the cores)")
	date := flag.String("date", time.Now().UTC().Format("2006-01-02"), "the report's date (file name)")
	render := flag.String("render", "", "write the report of a run's raw `JSON` again (no measurement)")
	flag.Parse()
	flag.Visit(func(f *flag.Flag) {
		if slices.Contains(retired, f.Name) {
			log.Printf("loadgen: warning: -%s is no longer used and is ignored: slivingdoc publishes by one path, with no modes to choose", f.Name)
		}
	})
	if *render != "" {
		paths, err := rerender(*render, *out, *date)
		if err != nil {
			log.Fatalf("loadgen: %v", err)
		}
		fmt.Println(strings.Join(paths, "\n"))
		return
	}
	if *quick {
		*profName = "quick"
	}
	prof, ok := profiles[*profName]
	if !ok {
		log.Fatalf("loadgen: unknown profile %q (quick or full)", *profName)
	}
	if *reps > 0 {
		prof.latencyReps = *reps
	}
	if *sizes != "" {
		prof.sizes = atoiList(*sizes)
	}
	if *writers != "" {
		prof.writers = atoiList(*writers)
		prof.sharedWriters = prof.writers
	}
	if *agents > 0 {
		prof.agents = *agents
	}
	if *window > 0 {
		prof.agentWindow = *window
	}
	if *capRun > 0 {
		prof.contentionTimeout = *capRun
	}
	if *historyCommits > 0 {
		prof.historyCommits = *historyCommits
	}
	if *historyAlternate >= 0 {
		prof.historyAlternate = *historyAlternate
	}
	if *drivers != "" {
		prof.drivers = strings.Split(*drivers, ",")
		for _, d := range prof.drivers {
			if !slices.Contains(allDrivers, d) {
				log.Fatalf("loadgen: unknown driver %q (cli or serve)", d)
			}
		}
	}
	prof.modes = []string{modeDisjoint, modeShared, modeSections}
	if *modes != "" {
		prof.modes = strings.Split(*modes, ",")
		for _, m := range prof.modes {
			if !slices.Contains([]string{modeDisjoint, modeShared, modeSections}, m) {
				log.Fatalf("loadgen: unknown contention mode %q (disjoint, shared or shared-sections)", m)
			}
		}
	}
	prof.unproxied = *unproxied
	switch *roots {
	case rootsShared, rootsOwn:
		prof.privateRoots = *roots
	default:
		log.Fatalf("loadgen: unknown -private-roots %q (shared or own)", *roots)
	}
	// Every commit publishes by format 4 (a store of an older version is
	// upgraded by its first commit), so a row "at format 3" would measure
	// format 4 under another name: -format 3 is run as 4, once.
	prof.formats = nil
	for _, f := range atoiList(*formats) {
		switch f {
		case 3:
			log.Printf("loadgen: warning: -format 3 is no longer written (every commit publishes by format 4): the rows run at format 4")
			f = 4
		case 4:
		default:
			log.Fatalf("loadgen: -format %d: the only store format written is 4", f)
		}
		if !slices.Contains(prof.formats, f) {
			prof.formats = append(prof.formats, f)
		}
	}
	allowed := strings.Split(*stores, ",")
	for _, l := range []*[]string{&prof.latencyStores, &prof.historyStores, &prof.contentionStores, &prof.agentStores} {
		*l = slices.DeleteFunc(slices.Clone(*l), func(s string) bool { return !slices.Contains(allowed, s) })
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lg := log.New(os.Stderr, "loadgen: ", log.Ltime)
	var res *Results
	res, err = run(ctx, lg, prof, *bin, strings.Split(*workloads, ","), slices.Contains(allowed, "file"), slices.Contains(allowed, "seaweedfs"))
	if err != nil {
		sp.close()
		lg.Fatal(err)
	}
	paths, err := writeReport(*out, *date, res)
	if err != nil {
		lg.Fatal(err)
	}
	for _, p := range paths {
		fmt.Println(p)
	}
}

func atoiList(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n <= 0 {
			log.Fatalf("loadgen: bad number %q in %q", f, s)
		}
		out = append(out, n)
	}
	return out
}

// run measures everything in workloads and returns the results. A
// workload that fails is recorded in Results.Failures; the others go on.
func run(ctx context.Context, lg *log.Logger, prof profile, bin string, workloads []string, useFile, useSeaweed bool) (*Results, error) {
	work, err := os.MkdirTemp("", "slivingdoc-loadgen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	r := &runner{bin: bin, work: work, prof: prof, log: lg, stores: map[string]*storeTarget{}}
	if r.bin == "" {
		r.bin = filepath.Join(work, "slivingdoc")
		lg.Printf("building slivingdoc")
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", r.bin, "github.com/slivingdoc/slivingdoc/cmd/slivingdoc")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build: %v\n%s", err, out)
		}
	} else if r.bin, err = filepath.Abs(r.bin); err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("git is the reference of the no-op scans and merge-file and is not installed")
	}
	res := newResults(prof, r.bin)
	res.Meta.WorkDir = work
	if s, _, err := runTimed(ctx, work, "true"); err == nil {
		res.Meta.RSSFloorKiB = s.RSSKiB
	}
	if useFile {
		r.stores["file"] = fileTarget(work)
	}
	if useSeaweed {
		tb := &bench.ProgramTB{}
		defer tb.Close()
		lg.Printf("starting SeaweedFS (internal/seaweed; builds it on first use)")
		t0 := time.Now()
		if err = bench.SeaweedCall(func() { r.srv = seaweed.Start(tb) }); err != nil {
			return nil, fmt.Errorf("seaweedfs: %w", err)
		}
		lg.Printf("SeaweedFS up in %v at %s", time.Since(t0).Round(time.Millisecond), r.srv.Endpoint)
		proxy, err := newCountingProxy(r.srv.Endpoint)
		if err != nil {
			return nil, err
		}
		defer proxy.close()
		r.stores["seaweedfs"] = seaweedTarget(r.srv, proxy)
	}
	step := func(name string, f func() error) {
		if ctx.Err() != nil {
			return
		}
		lg.Printf("%s ...", name)
		t0 := time.Now()
		l0, _ := loadAverage()
		err := f()
		l1, _ := loadAverage()
		res.Steps = append(res.Steps, Step{Name: name, Start: t0.UTC(), Duration: time.Since(t0), LoadStart: l0, LoadEnd: l1})
		if err != nil {
			lg.Printf("%s FAILED: %v", name, err)
			res.Failures = append(res.Failures, fmt.Sprintf("%s: %v", name, err))
			return
		}
		lg.Printf("%s done in %v", name, time.Since(t0).Round(time.Millisecond))
	}
	want := func(w string) bool { return slices.Contains(workloads, w) }
	sw := r.stores["seaweedfs"]
	if want("requests") && sw != nil {
		step("requests", func() error {
			rr, err := r.requests(ctx, sw)
			res.Requests = &rr
			return err
		})
		step("floor", func() error {
			pack, manifest := res.Requests.commitSizes()
			f, err := r.floor(ctx, r.srv, pack, manifest)
			res.Floor = &f
			return err
		})
	}
	for _, name := range prof.latencyStores {
		st := r.stores[name]
		for _, n := range prof.sizes {
			if want("latency") && st != nil {
				step(fmt.Sprintf("latency %s %d files", name, n), func() error {
					l, err := r.latency(ctx, st, n)
					if err == nil {
						res.Latency = append(res.Latency, l)
					}
					return err
				})
			}
		}
	}
	for _, name := range prof.historyStores {
		if st := r.stores[name]; want("history") && st != nil {
			step("history "+name, func() error {
				h, err := r.history(ctx, st)
				if err == nil {
					res.History = append(res.History, h)
				}
				return err
			})
		}
	}
	for _, name := range both {
		if st := r.stores[name]; want("bytes") && st != nil {
			step("bytes "+name, func() error {
				b, err := r.bytesWorkload(ctx, st)
				if err == nil {
					res.Bytes = append(res.Bytes, b)
				}
				return err
			})
		}
	}
	if want("merge") {
		for _, size := range prof.mergeSizes {
			step(fmt.Sprintf("merge-file %d MB", size>>20), func() error {
				m, err := r.mergeWorkload(ctx, size)
				if err == nil {
					res.Merge = append(res.Merge, m)
				}
				return err
			})
		}
	}
	for _, name := range prof.contentionStores {
		st := r.stores[name]
		for _, mode := range prof.modes {
			counts := map[string][]int{modeDisjoint: prof.writers, modeShared: prof.sharedWriters, modeSections: prof.sharedWriters}[mode]
			for _, n := range counts {
				for _, drv := range prof.drivers {
					for _, format := range prof.formats {
						if want("contention") && st != nil {
							step(contentionStep(name, mode, n, drv, format), func() error {
								c, err := r.contentionBy(ctx, st, mode, n, drv, format)
								if err == nil {
									res.Contention = append(res.Contention, c)
								}
								return err
							})
						}
					}
				}
			}
		}
	}
	for _, name := range prof.agentStores {
		for _, drv := range prof.drivers {
			for _, format := range prof.formats {
				if st := r.stores[name]; want("agents") && st != nil {
					step(agentsStep(name, drv, format), func() error {
						a, err := r.agentsWorkloadBy(ctx, st, drv, format)
						if err == nil {
							res.Agents = append(res.Agents, a)
						}
						return err
					})
				}
			}
		}
	}
	if s, _, err := runTimed(ctx, work, "true"); err == nil {
		res.Meta.RSSFloorEndKiB = s.RSSKiB
	}
	res.finish()
	return res, ctx.Err()
}
