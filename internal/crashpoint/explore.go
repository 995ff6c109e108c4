package crashpoint

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The schedule explorer: the generic half of a deterministic test whose
// every nondeterministic decision (which writer's request the store
// applies next, whether a fault hits it) is a choice among n options.
// A schedule is the sequence of choices; running it again gives the same
// outcome, so a failure is its choice sequence. Explore enumerates every
// schedule depth first by replaying prefixes (no state is copied: a run
// starts from nothing each time); Sample draws schedules from seeds, each
// schedule from its own (seed + i), so any one replays alone; Replay runs
// one given schedule. The crash tests of cmd/slivingdoc enumerate crash
// points the same way in spirit (every point, then every pair), over
// processes; the publication test (publish/explore_test.go) uses this
// explorer over the store requests of 2–3 writers in one process.

// Choose picks one of n options; fault says the choice is whether (and
// how) a fault hits, option 0 being "none", which Sample favours.
type Choose func(n int, fault bool) int

// Outcome is what one run of a schedule reports.
type Outcome struct {
	Cut     bool  // the run reached its bound (not a failure)
	Faulted bool  // at least one fault was chosen
	Err     error // a broken invariant
	Trace   []string
}

// Run runs one schedule, asking choose at every decision.
type Run func(choose Choose) Outcome

// Stats counts the schedules an exploration ran.
type Stats struct {
	Schedules, Cut, Faulted int
}

func (s *Stats) add(o Outcome) {
	s.Schedules++
	if o.Cut {
		s.Cut++
	}
	if o.Faulted {
		s.Faulted++
	}
}

// Failure is a schedule that broke an invariant.
type Failure struct {
	Choices []int
	Seed    uint64 // Sample's seed of this schedule (0: from Explore)
	Err     error
	Trace   []string
}

func (f *Failure) Error() string {
	return fmt.Sprintf("schedule %v (seed %d): %v\n%s", f.Choices, f.Seed, f.Err, strings.Join(f.Trace, "\n"))
}

// Explore runs every schedule, depth first, until one fails or limit
// schedules have run (0: no limit).
func Explore(run Run, limit int) (Stats, *Failure) {
	var st Stats
	var prefix []int
	for limit == 0 || st.Schedules < limit {
		var choices, widths []int
		o := run(func(n int, _ bool) int {
			c := 0
			if len(choices) < len(prefix) {
				c = prefix[len(choices)]
			}
			choices = append(choices, c)
			widths = append(widths, n)
			return c
		})
		st.add(o)
		if o.Err != nil {
			return st, &Failure{Choices: choices, Err: o.Err, Trace: o.Trace}
		}
		i := len(choices) - 1
		for i >= 0 && choices[i]+1 >= widths[i] {
			i--
		}
		if i < 0 {
			break
		}
		prefix = append(choices[:i:i], choices[i]+1)
	}
	return st, nil
}

// Sample runs n schedules drawn from seed, seed+1, ...: at each choice a
// uniform option, except that a fault choice is "none" seven times in
// eight (the run bounds how many faults it takes).
func Sample(run Run, seed uint64, n int) (Stats, *Failure) {
	var st Stats
	for i := 0; i < n; i++ {
		s := seed + uint64(i)
		rng := rand.New(rand.NewPCG(s, 2))
		var choices []int
		o := run(func(n int, fault bool) int {
			c := rng.IntN(n)
			if fault && rng.IntN(8) != 0 {
				c = 0
			}
			choices = append(choices, c)
			return c
		})
		st.add(o)
		if o.Err != nil {
			return st, &Failure{Choices: choices, Seed: s, Err: o.Err, Trace: o.Trace}
		}
	}
	return st, nil
}

// Replay runs the one schedule choices names (a choice beyond the
// sequence is 0, one out of range is taken modulo its width).
func Replay(run Run, choices []int) Outcome {
	i := 0
	return run(func(n int, _ bool) int {
		c := 0
		if i < len(choices) {
			c = choices[i] % n
		}
		i++
		return c
	})
}
