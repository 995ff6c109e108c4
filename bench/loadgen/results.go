package main

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// Results is everything one run measured, written as the report and as
// raw JSON.
type Results struct {
	Meta       Meta
	Floor      *FloorResult
	Requests   *RequestsResult
	Latency    []LatencyResult
	History    []HistoryResult
	Bytes      []BytesResult
	Merge      []MergeResult
	Contention []ContentionResult
	Agents     []AgentsResult
	Failures   []string // workloads that could not complete, with the reason
	Steps      []Step   // every workload as it ran, with the load around it

	loadMu   sync.Mutex
	loadStop chan struct{}
}

// Step is one workload run: when, how long, and the machine's 1-minute
// load average before and after (the load generator's own processes
// included: contention and agents load the machine themselves).
type Step struct {
	Name      string
	Start     time.Time
	Duration  time.Duration
	LoadStart float64
	LoadEnd   float64
}

// Meta describes the run and the machine.
type Meta struct {
	Profile   string
	Start     time.Time
	End       time.Time
	CPUs      int
	CPUModel  string
	GOOS      string
	GOARCH    string
	GoVersion string
	Commit    string // git HEAD of the measured tree
	Binary    string // `slivingdoc version`
	Git       string // `git --version`
	SeaweedFS string
	// WorkDir holds every notebook, private root and reference repository
	// of the run (os.MkdirTemp, so under TMPDIR): creating files costs
	// very different amounts in different directories of one disk (/tmp
	// here: 10-25x /work's), and each commit creates a dozen.
	WorkDir string `json:",omitempty"`
	// Load is the 1-minute load average sampled every 5 s during the run:
	// the machine is shared, and the figures mean little without it.
	Load []float64
	// RSSFloorKiB is the max RSS reported for /bin/true started the way
	// every measured process is: RSS figures at or below it mean "at most
	// this" (spawner.go explains why).
	RSSFloorKiB int64
	// RSSFloorEndKiB is the same at the end of the run (the spawner grows
	// a little as it serves hundreds of concurrent processes).
	RSSFloorEndKiB int64
}

func newResults(prof profile, bin string) *Results {
	res := &Results{Meta: Meta{
		Profile: prof.name, Start: time.Now().UTC(), CPUs: runtime.NumCPU(), CPUModel: cpuModel(),
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GoVersion: runtime.Version(),
		Commit: cmdOutput("git", "rev-parse", "--short", "HEAD"), Binary: cmdOutput(bin, "version"),
		Git: cmdOutput("git", "--version"), SeaweedFS: seaweed.Module + "@" + seaweed.Version,
	}, loadStop: make(chan struct{})}
	res.sampleLoad()
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-res.loadStop:
				return
			case <-t.C:
				res.sampleLoad()
			}
		}
	}()
	return res
}

func (r *Results) sampleLoad() {
	if l, ok := loadAverage(); ok {
		r.loadMu.Lock()
		r.Meta.Load = append(r.Meta.Load, l)
		r.loadMu.Unlock()
	}
}

func (r *Results) finish() {
	close(r.loadStop)
	r.sampleLoad()
	r.Meta.End = time.Now().UTC()
}

// loadAverage reads the 1-minute load average (Linux only).
func loadAverage() (float64, bool) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, false
	}
	l, err := strconv.ParseFloat(f[0], 64)
	return l, err == nil
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func cmdOutput(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
