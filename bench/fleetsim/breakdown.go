package fleetsim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
)

// This file is the publish mode's breakdown of commit latency
// (Config.Breakdown): where each measured commit's time went, from its
// instant to the agent learning its acceptance, told against the writes
// of `current` that landed meanwhile. It answers "how many fold cycles
// did this commit span, and why".

// commitTimes is one accepted commit's instants (model time since the
// run's start): its instant, the start of its first call (later when the
// agent's previous commit was still running), the landing of its
// accepted version's registration, and the agent learning it; and the
// generation that names it.
type commitTimes struct {
	instant, start, registered, learned time.Duration
	gen                                 uint64
	measured                            bool
}

// landing is one won write of `current`: when the store applied it, the
// generations it added (first..last) and when it was sent.
type landing struct {
	sent, at    time.Duration
	first, last uint64
}

// rawTimes are commitTimes on the real clock.
type rawTimes struct {
	instant, start, registered, learned time.Time
	gen                                 uint64
	measured                            bool
}

// landings records the won writes of `current` (Latency.onWrite) on the
// real clock.
type landings struct {
	mu   sync.Mutex
	last uint64
	all  []rawLanding
}

type rawLanding struct {
	sent, at    time.Time
	first, last uint64
}

func (l *landings) onWrite(key string, data []byte, sent time.Time) {
	if key != remote.CurrentKey {
		return
	}
	at := time.Now()
	m, err := remote.DecodeManifestV4(data)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, rawLanding{sent, at, l.last + 1, m.Generation})
	l.last = m.Generation
}

// agentStore is one agent's view of the store for publish: it notes when
// the agent's own registration landed.
type agentStore struct {
	remote.Store
	a *v4agent
}

// ListAfter passes the window's LIST on as one request (Latency's).
func (s agentStore) ListAfter(ctx context.Context, prefix, after string) ([]remote.ObjectInfo, error) {
	return remote.ListAfter(ctx, s.Store, prefix, after)
}

func (s agentStore) Put(ctx context.Context, key string, data []byte) error {
	err := s.Store.Put(ctx, key, data)
	if err == nil && key == s.a.builtKey {
		s.a.regAt = time.Now()
	}
	return err
}

// Breakdown is where the measured commits' time went, for all of them
// and for those slower than Slow.
type Breakdown struct {
	Slow       time.Duration
	All, Slows Phases
	// Cycle is the time between consecutive landings of `current`, and
	// Group the generations each write added, over the measured part.
	Cycle Percentiles
	Group float64
	// Turn is the time from a landing to the sending of the next write
	// (the next folder learning of it, its gather and LISTs, the fold
	// and its uploads): the cycle less the write's own second.
	Turn Percentiles
}

// Phases are the mean phases of a set of commits, and how many fold
// cycles they spanned: Cycles[n] counts the commits whose accepting write
// was the n-th to land after their registration (index 3: 3 or more).
type Phases struct {
	N int
	// Queue: instant to the call's start (the agent's previous commit
	// still running); Prologue: start to the registration landing (GET
	// current, catch-up, build, PUT); Fold: registration to the landing
	// of the write that accepted it; Learn: that landing to the agent
	// knowing.
	Queue, Prologue, Fold, Learn time.Duration
	Queued                       int // commits whose call started after their instant
	Cycles                       [4]int
	// Missed: of the commits of two or more cycles, those registered
	// before the write ahead of their accepting one was sent (so its
	// folder had listed without them, or took them not).
	Missed int
}

// breakdown computes the Breakdown of cs against the landings ls.
func breakdown(cs []commitTimes, ls []landing, warmup, slow time.Duration) *Breakdown {
	ls = slices.Clone(ls)
	slices.SortFunc(ls, func(x, y landing) int { return int(x.last) - int(y.last) })
	b := &Breakdown{Slow: slow}
	var gaps, turns []time.Duration
	var gens, writes int
	for i := 1; i < len(ls); i++ {
		if ls[i].at >= warmup {
			gaps = append(gaps, ls[i].at-ls[i-1].at)
			turns = append(turns, ls[i].sent-ls[i-1].at)
			gens += int(ls[i].last - ls[i].first + 1)
			writes++
		}
	}
	b.Cycle, b.Turn = percentiles(gaps), percentiles(turns)
	if writes > 0 {
		b.Group = float64(gens) / float64(writes)
	}
	add := func(p *Phases, c commitTimes) {
		i, ok := slices.BinarySearchFunc(ls, c.gen, func(l landing, g uint64) int {
			switch {
			case l.last < g:
				return -1
			case l.first > g:
				return 1
			}
			return 0
		})
		if !ok {
			return
		}
		w := ls[i]
		n := 0
		for j := i; j >= 0 && ls[j].at > c.registered; j-- {
			n++
		}
		p.N++
		p.Queue += c.start - c.instant
		if c.start-c.instant > time.Millisecond {
			p.Queued++
		}
		p.Prologue += c.registered - c.start
		p.Fold += w.at - c.registered
		p.Learn += c.learned - w.at
		p.Cycles[min(n, 3)]++
		if n >= 2 && c.registered < ls[i-1].sent {
			p.Missed++
		}
	}
	for _, c := range cs {
		if !c.measured {
			continue
		}
		add(&b.All, c)
		if c.learned-c.instant > slow {
			add(&b.Slows, c)
		}
	}
	for _, p := range []*Phases{&b.All, &b.Slows} {
		if p.N > 0 {
			n := time.Duration(p.N)
			p.Queue, p.Prologue, p.Fold, p.Learn = p.Queue/n, p.Prologue/n, p.Fold/n, p.Learn/n
		}
	}
	return b
}

// markdownBreakdown renders a run's Breakdown.
func markdownBreakdown(r *Result) string {
	b := r.Breakdown
	if b == nil {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\nWhere the measured commits' time went (%d agents; means; cycles: the commit's accepting write was the n-th to land after its registration; missed: of those of 2 or more, registered before the write ahead of it was sent). Landing to landing: p50 %s, p90 %s, p99 %s, mean %s; of which landing to the next write's sending: p50 %s, p90 %s, mean %s; %.1f generations per write.\n\n",
		r.Agents, ms(b.Cycle.P50), ms(b.Cycle.P90), ms(b.Cycle.P99), ms(b.Cycle.Mean), ms(b.Turn.P50), ms(b.Turn.P90), ms(b.Turn.Mean), b.Group)
	s.WriteString("| commits | n | queued behind the agent's previous commit | queue | prologue | registration to accepting landing | learning it | 1 cycle | 2 | 3 or more | missed |\n")
	s.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, row := range []struct {
		name string
		p    Phases
	}{{"all measured", b.All}, {"slower than " + ms(b.Slow), b.Slows}} {
		p := row.p
		fmt.Fprintf(&s, "| %s | %d | %d | %s | %s | %s | %s | %d | %d | %d | %d |\n", row.name, p.N, p.Queued,
			ms(p.Queue), ms(p.Prologue), ms(p.Fold), ms(p.Learn), p.Cycles[1], p.Cycles[2], p.Cycles[3], p.Missed)
	}
	return s.String()
}
