//go:build unix

package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// stats are the figures of one store's campaign. Failures fail the run;
// notes are reported as they are.
type stats struct {
	store string

	mu         sync.Mutex
	start      time.Time
	faultPhase time.Duration
	scheduled  map[faultKind]int
	fired      map[faultKind]int
	unfired    []string // events that did not demonstrably happen
	ops        map[string]int
	outcomes   map[outcome]int
	errors     map[string]*errCount // by "CODE·REASON"
	perWriter  map[int]int          // finished operations
	durations  []time.Duration
	all        []opResult // every operation, without output, for the outage rule
	// operations that ran entirely while the store was down
	duringOutage int
	longest      opResult
	resolved     int            // conflict blocks the writers had to resolve
	conflictCx   map[string]int // conflict results by what the writer's previous operation did
	resets       []string
	failures     []string
	notes        []string
	before       verdict // right after the fault phase
	verdict      verdict // after settling
	verified     bool
	generation   uint64 // the highest accepted generation an operation reported
	// issue 14 audits (audit.go)
	fpFired map[string]int // kill-at-failpoint kills by failpoint
	// issue 37: kill-twice (double.go)
	dblFired    map[string]int // completed by pair of failpoints
	dblRestarts int            // second kills that missed, so the pair started over
	dblPauses   int            // pauses after a kill that saw another writer's log line accepted
	dblPlain    map[string]int // how the plain commit after the two kills ended
	dblMissed   []string       // kill-twice events that did not complete
	markerPulls int            // fresh and observer pulls audited for marker lines
	markerLines int            // marker lines found in them: must be 0
	foreign     []string       // conflicts in files the writer did not edit: must be none
	privateMax  int64          // bytes of the largest writer private root at the end
}

type errCount struct {
	Code, Reason, Action string
	Retryable            bool
	N                    int
	Causes               []string // a few log lines behind it, for the terminal
}

func newStats(store string) *stats {
	return &stats{store: store, scheduled: map[faultKind]int{}, fired: map[faultKind]int{},
		conflictCx: map[string]int{}, ops: map[string]int{}, outcomes: map[outcome]int{}, errors: map[string]*errCount{}, perWriter: map[int]int{}}
}

func (s *stats) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, fmt.Sprintf(format, args...))
}

func (s *stats) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

func (s *stats) event(ev event, fired bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scheduled[ev.Kind]++
	if fired {
		s.fired[ev.Kind]++
	} else {
		s.unfired = append(s.unfired, fmt.Sprintf("round %d %s (writer %d)", ev.Round, ev.Kind, ev.Target))
	}
}

// op records one finished operation and applies the per-operation rules:
// the time bound, a documented error with its documented retryability,
// and no broken outcome (exit 2, a crash, a report that does not parse).
func (s *stats) op(r opResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops[r.Op]++
	s.outcomes[r.Outcome]++
	s.perWriter[r.Writer]++
	d := r.Duration()
	brief := r
	brief.Output, brief.Cause = "", ""
	s.all = append(s.all, brief)
	s.durations = append(s.durations, d)
	if d > s.longest.Duration() {
		s.longest = r
	}
	s.generation = max(s.generation, r.Generation)
	switch r.Outcome {
	case outDomain:
		key := r.Report.Code + "·" + r.Report.Reason
		e := s.errors[key]
		if e == nil {
			e = &errCount{Code: r.Report.Code, Reason: r.Report.Reason, Action: r.Report.Action, Retryable: r.Report.Retryable}
			s.errors[key] = e
		}
		e.N++
		if len(e.Causes) < 3 && r.Cause != "" {
			e.Causes = append(e.Causes, fmt.Sprintf("after %s: %s", r.Op, r.Cause))
		}
		if msg := checkCatalog(r.Report); msg != "" {
			s.failures = append(s.failures, fmt.Sprintf("writer %d %s: undocumented error: %s", r.Writer, r.Op, msg))
		}
	case outTimeout:
		s.failures = append(s.failures, fmt.Sprintf("writer %d %s ran past the %s bound and was killed:\n%s", r.Writer, r.Op, d.Round(time.Millisecond), r.Output))
	case outBroken:
		s.failures = append(s.failures, fmt.Sprintf("writer %d %s ended without a result or a report:\n%s", r.Writer, r.Op, r.Output))
	}
}

func (s *stats) opsOf(w int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perWriter[w]
}

func (s *stats) conflicts(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resolved += n
}

func (s *stats) conflictAfter(context string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conflictCx[context]++
}

func (s *stats) failpointFired(point string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fpFired == nil {
		s.fpFired = map[string]int{}
	}
	s.fpFired[point]++
}

// doubleFired records a completed kill-twice and how its plain commit
// ended.
func (s *stats) doubleFired(pair [2]string, restarts, pauses int, plain opResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dblFired == nil {
		s.dblFired, s.dblPlain = map[string]int{}, map[string]int{}
	}
	s.dblFired[doubleKey(pair)]++
	s.dblRestarts += restarts
	s.dblPauses += pauses
	s.dblPlain[describe(plain)]++
}

// doubleMissed records a kill-twice that did not complete in time.
func (s *stats) doubleMissed(pair [2]string, stage, restarts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dblRestarts += restarts
	s.dblMissed = append(s.dblMissed, fmt.Sprintf("%s stopped at stage %d", doubleKey(pair), stage))
}

// observed records one audited pull: n marker lines (failures if any).
func (s *stats) observed(n int, where []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markerPulls++
	s.markerLines += n
	if n > 0 {
		s.failures = append(s.failures, fmt.Sprintf("%d marker lines published: %s", n, strings.Join(where, "; ")))
	}
}

func (s *stats) foreignConflict(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.foreign = append(s.foreign, what)
	s.failures = append(s.failures, what)
}

func (s *stats) cacheReset(w int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resets = append(s.resets, fmt.Sprintf("writer %d (%s)", w, reason))
}

// events is the number of faults injected.
func (s *stats) events() int {
	n := 0
	for _, v := range s.scheduled {
		n += v
	}
	return n
}

// percentile is the nearest-rank percentile q of the operation times.
func (s *stats) percentile(q float64) time.Duration {
	if len(s.durations) == 0 {
		return 0
	}
	d := slices.Clone(s.durations)
	slices.Sort(d)
	i := int(q*float64(len(d))+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}
