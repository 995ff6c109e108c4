package pubmodel

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"
)

// Config is one simulated fleet.
type Config struct {
	Protocol string // "v4" (docs/publication.md) or "today" (format v3, roughly)
	Agents   int
	// Window: each agent commits once in every window, at a uniform
	// instant of it (a commit still running when the next instant comes
	// delays the next one).
	Window  time.Duration
	Warmup  time.Duration // commits started before it are not measured
	Measure time.Duration // then measured for this long
	RTT     time.Duration // every request's round trip
	Cond    time.Duration // a conditional write holds its key this long, won or lost
	// Reject: a conditional write that finds its key held is answered at
	// once with a rate-limit refusal (HTTP 429), holding nothing, instead
	// of queueing behind the holder.
	Reject   bool
	Conflict float64 // see Params.Conflict
	CrashP   float64 // per request: the writer dies before or after it applies
	AmbigP   float64 // per conditional write: the reply is lost (applied or not)
	Seed     uint64
	Params   Params // v4 constants; zero: DefaultParams
	// Trace, when set, receives one line per accepted write of `current`.
	Trace func(string)
}

type event struct {
	at  time.Duration
	seq int
	fn  func()
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// sim is the discrete-event engine: virtual time, one event queue, one
// seeded source. Nothing runs concurrently; ties break by issue order.
type sim struct {
	cfg     Config
	t       time.Duration
	seq     int
	q       eventQueue
	rng     *rand.Rand
	st      *store
	keyFree map[string]time.Duration
	nextID  int
	res     *Result
	commits []*writer
	last    []*writer // per agent, its newest call
	known   []int     // per agent, the generation its cache reaches
	armed   []bool    // per agent, a start is scheduled at its next instant
}

func (s *sim) now() time.Duration { return s.t }
func (s *sim) rand() *rand.Rand   { return s.rng }
func (s *sim) store() *store      { return s.st }

func (s *sim) at(t time.Duration, fn func()) {
	s.seq++
	heap.Push(&s.q, &event{at: t, seq: s.seq, fn: fn})
}

func (s *sim) sleep(w *writer, d time.Duration, done func()) {
	s.at(s.t+d, func() {
		if !w.crashed {
			done()
		}
	})
}

func (s *sim) send(w *writer, r req, done func(any, fault)) {
	if w.crashed {
		return
	}
	n := max(r.n, 1)
	w.reqs[r.label] += float64(n)
	half := s.cfg.RTT / 2
	crash := s.cfg.CrashP > 0 && s.rng.Float64() < s.cfg.CrashP
	crashBefore := crash && s.rng.IntN(2) == 0
	if crashBefore {
		s.crash(w)
		return
	}
	arrive := s.t + half
	reply := func(at time.Duration, v any, f fault) {
		s.at(at, func() {
			if crash {
				s.crash(w)
				return
			}
			if !w.crashed {
				done(v, f)
			}
		})
	}
	if r.op != opCond {
		s.at(arrive, func() { reply(s.t+half, r.apply(), faultNone) })
		return
	}
	amb := s.cfg.AmbigP > 0 && s.rng.Float64() < s.cfg.AmbigP
	applyIt := !amb || s.rng.IntN(2) == 0
	s.at(arrive, func() {
		free := s.keyFree[r.key]
		if s.cfg.Reject && free > s.t {
			s.res.Rejected++
			reply(s.t+half, false, faultNone)
			return
		}
		startAt := max(s.t, free)
		end := startAt + s.cfg.Cond
		s.keyFree[r.key] = end
		s.at(end, func() {
			var v any = false
			if applyIt {
				v = r.apply()
				if v == true && r.key == "current" {
					s.st.landed = append(s.st.landed, s.t)
				}
				if s.cfg.Trace != nil && v == true && r.key == "current" {
					c := s.st.cur
					s.cfg.Trace(fmt.Sprintf("%8.3fs write %d by %d: sent %.3fs, held from %.3fs, generation %d, %d waiting",
						s.t.Seconds(), c.writes, w.id, c.sent.Seconds(), startAt.Seconds(), c.gen, len(s.st.list(c.gen-s.cfg.Params.K))))
				}
			}
			f := faultNone
			if amb {
				f = faultAmbiguous
			}
			reply(s.t+half, v, f)
		})
	})
}

func (s *sim) finish(w *writer, gen int, why string) {
	if w.done {
		panic(fmt.Sprintf("commit %d finished twice", w.id))
	}
	w.done = true
	w.gen, w.end = gen, s.t
	lat := s.t - w.start
	measured := w.start >= s.cfg.Warmup && w.start < s.cfg.Warmup+s.cfg.Measure
	if gen > 0 {
		if got := s.st.cur; got.gen >= gen && got.ids[gen-1] != w.id {
			panic(fmt.Sprintf("commit %d reported generation %d, which accepted %d", w.id, gen, got.ids[gen-1]))
		}
		s.res.reported[w.id] = gen
		if s.t >= s.cfg.Warmup && s.t < s.cfg.Warmup+s.cfg.Measure {
			s.res.AcceptedInWindow++
		}
	} else {
		s.res.Busy++
	}
	if measured {
		s.res.latencies = append(s.res.latencies, lat)
		s.res.calls = append(s.res.calls, s.t-w.began)
		s.res.Measured++
		for k, v := range w.reqs {
			s.res.Requests[k] += v
		}
		s.res.CondSent += w.cond
		s.res.CondLost += w.lost
	}
	s.known[w.agent] = max(s.known[w.agent], w.known)
	s.agentNext(w.agent)
}

func (s *sim) registered(w *writer) { s.agentNext(w.agent) }

// crash kills w's process, and with it every call of its agent; the
// agent's next commit comes from a new one whose cache reaches what w's
// did.
func (s *sim) crash(w *writer) {
	if w.crashed {
		return
	}
	w.crashed = true
	s.res.Crashed++
	for p := s.last[w.agent]; p != nil; p = p.pred {
		if !p.done && !p.crashed {
			p.crashed = true
			s.res.Crashed++
		}
	}
	s.known[w.agent] = max(s.known[w.agent], w.known)
	s.agentNext(w.agent)
}

// Result is what one run measured.
type Result struct {
	Config            Config
	Commits, Measured int
	AcceptedInWindow  int // acceptances that came within the measured window
	Busy              int // calls that ended without acceptance (REMOTE_BUSY)
	Crashed           int
	Rejected          int                // conditional writes answered 429
	Requests          map[string]float64 // by label, summed over measured commits
	CondSent          int
	CondLost          int
	Writes            int // accepted writes of `current`
	Generations       int
	Unfinished        int // commits neither finished nor crashed at the end
	P50, P99, Mean    time.Duration
	latencies         []time.Duration
	calls             []time.Duration
	CallP50, CallP99  time.Duration // the same from the call's start (no wait for the agent's previous commit)
	// Cycle is the mean time from one accepted write's landing to the
	// next in the measured window.
	Cycle time.Duration
	// Queued: measured commits due before their agent's previous commit
	// was accepted; QueuedMissed: of them, those accepted by a write
	// after the one that followed their predecessor's.
	Queued, QueuedMissed int
	reported             map[int]int
	agentQueue           [][]time.Duration
	store                *store
}

// agentNext starts the agent's next commit once it is due and the
// agent's newest call is over (or, with Chain, has registered).
func (s *sim) agentNext(a int) {
	q := s.res.agentQueue[a]
	if len(q) == 0 || s.armed[a] {
		return
	}
	t := q[0]
	if t > s.t {
		s.armed[a] = true
		s.at(t, func() { s.armed[a] = false; s.agentNext(a) })
		return
	}
	last := s.last[a]
	var pred *writer
	if last != nil && !last.done && !last.crashed {
		if !s.cfg.Params.Chain || last.proto.(*v4).first < 0 {
			return // started when it finishes or registers
		}
		pred = last
	}
	s.res.agentQueue[a] = q[1:]
	s.startCommit(a, t, pred)
}

// startCommit starts the agent's commit scheduled at instant due (its
// latency counts from then: waiting for the agent's previous commit is
// part of what the agent sees), chained behind pred if not nil.
func (s *sim) startCommit(a int, due time.Duration, pred *writer) {
	s.nextID++
	known := s.known[a]
	if pred != nil {
		known = pred.known
	}
	w := &writer{agent: a, id: s.nextID, start: due, began: s.t, known: known, reqs: map[string]float64{},
		pred: pred, prev: s.last[a]}
	s.last[a] = w
	s.commits = append(s.commits, w)
	s.res.Commits++
	switch s.cfg.Protocol {
	case "today":
		w.proto = newToday(s.cfg)
	default:
		w.proto = newV4(s.cfg.Params, s.cfg.Seed)
	}
	w.proto.begin(s, w)
}

// Run simulates cfg and audits the store at the end.
func Run(cfg Config) (*Result, error) {
	if cfg.Params.K == 0 {
		cfg.Params = DefaultParams(cfg.Cond, cfg.RTT)
		cfg.Params.Conflict = cfg.Conflict
	}
	s := &sim{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)), st: newStore(),
		keyFree: map[string]time.Duration{}}
	s.res = &Result{Config: cfg, Requests: map[string]float64{}, reported: map[int]int{},
		agentQueue: make([][]time.Duration, cfg.Agents), store: s.st}
	s.last, s.known, s.armed = make([]*writer, cfg.Agents), make([]int, cfg.Agents), make([]bool, cfg.Agents)
	end := cfg.Warmup + cfg.Measure
	for a := 0; a < cfg.Agents; a++ {
		for w0 := time.Duration(0); w0 < end; w0 += cfg.Window {
			t := w0 + time.Duration(s.rng.Int64N(int64(cfg.Window)))
			if t < end {
				s.res.agentQueue[a] = append(s.res.agentQueue[a], t)
			}
		}
		s.agentNext(a)
	}
	limit := end + 10*time.Minute
	for s.q.Len() > 0 {
		e := heap.Pop(&s.q).(*event)
		if e.at > limit {
			break
		}
		s.t = e.at
		e.fn()
	}
	for _, w := range s.commits {
		if !w.done && !w.crashed {
			s.res.Unfinished++
		}
	}
	var in []time.Duration
	for _, t := range s.st.landed {
		if t >= cfg.Warmup && t < end {
			in = append(in, t)
		}
	}
	if len(in) > 1 {
		s.res.Cycle = (in[len(in)-1] - in[0]) / time.Duration(len(in)-1)
	}
	for _, w := range s.commits {
		p := w.prev
		if w.gen == 0 || p == nil || p.gen == 0 || p.end <= w.start || w.start < cfg.Warmup || w.start >= end {
			continue
		}
		s.res.Queued++
		if s.st.genWrite[w.gen-1] > s.st.genWrite[p.gen-1]+1 {
			s.res.QueuedMissed++
		}
	}
	s.res.Writes = s.st.cur.writes
	s.res.Generations = s.st.cur.gen
	l := s.res.latencies
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	c := s.res.calls
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	if len(c) > 0 {
		s.res.CallP50 = c[len(c)/2]
		s.res.CallP99 = c[min(len(c)-1, len(c)*99/100)]
	}
	if len(l) > 0 {
		s.res.P50 = l[len(l)/2]
		s.res.P99 = l[min(len(l)-1, len(l)*99/100)]
		var sum time.Duration
		for _, d := range l {
			sum += d
		}
		s.res.Mean = sum / time.Duration(len(l))
	}
	return s.res, audit(s.st, s.res.reported)
}

// audit checks the invariants the model can see at the end: every ID
// accepted at most once, every reported acceptance where it was reported.
func audit(st *store, reported map[int]int) error {
	if st.broken != "" {
		return fmt.Errorf("%s", st.broken)
	}
	for id, gens := range st.everSeen {
		if len(gens) > 1 {
			return fmt.Errorf("publication %d accepted twice, at generations %v", id, gens)
		}
	}
	for id, g := range reported {
		if g > st.cur.gen || st.cur.ids[g-1] != id {
			return fmt.Errorf("publication %d reported accepted at %d, which holds another", id, g)
		}
	}
	return nil
}
