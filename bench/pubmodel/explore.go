package pubmodel

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// The explorer runs 2-3 writers of the v4 protocol against the model
// store with no clock of its own: at every step it chooses which
// outstanding request (or ended wait) of which writer is applied next,
// and whether a fault hits it (the writer dies before the request
// applies, or after it applied but before the reply, or the reply of a
// conditional write is lost whether or not it applied). A schedule is
// the sequence of those choices. Explore enumerates every schedule up to
// a bound, depth first, by replaying choice prefixes; Sample draws
// schedules from one seed. Every schedule ends with the invariants of
// docs/publication.md checked; a failure names the schedule, which
// Replay runs again step by step.
//
// Model time advances by Tick per step, so a waiter's stall timeout (the
// designated folder presumed dead) fires after a few steps of others'
// work: forced folds race designated ones in the explored schedules.
// Safety must hold whatever the timing; liveness is checked only as "a
// schedule that runs out of steps to take has every surviving writer
// finished".

// Scope bounds an exploration.
type Scope struct {
	Writers  int           // 2 or 3
	Depth    int           // steps per schedule at most; longer ones are cut (counted)
	Faults   int           // faults per schedule at most
	Conflict float64       // see Params.Conflict
	Tick     time.Duration // model time per step
	// Commits per writer, one after another (a second commit of a writer
	// starts from what its first left in its cache).
	Commits int
	mutate  bool // Params.mutateFoldAccepted
}

// Stats counts what an exploration did.
type Stats struct {
	Schedules int // schedules run to the end
	Cut       int // schedules that reached Depth (not failures)
	Faulted   int // schedules with at least one fault
}

// Failure is an invariant broken by one schedule.
type Failure struct {
	Choices []int
	Err     error
	Trace   []string
}

func (f *Failure) Error() string {
	return fmt.Sprintf("schedule %v: %v\n%s", f.Choices, f.Err, strings.Join(f.Trace, "\n"))
}

type pendingOp struct {
	w     *writer
	r     *req
	done  func(any, fault)
	label string
}

// xenv is one schedule's world.
type xenv struct {
	sc       Scope
	st       *store
	steps    int // store requests applied
	clock    int // steps plus waits: model time in ticks
	ops      []*pendingOp
	writers  []*writer
	reported map[int]int
	choose   func(n int, fault bool) int
	rng      *rand.Rand
	faults   int
	trace    []string
	err      error
	nextID   int
	left     map[int]int // commits still to start per agent
	params   Params
}

func (x *xenv) now() time.Duration { return time.Duration(x.clock) * x.sc.Tick }
func (x *xenv) rand() *rand.Rand   { return x.rng }
func (x *xenv) store() *store      { return x.st }

func (x *xenv) send(w *writer, r req, done func(any, fault)) {
	if w.crashed {
		return
	}
	w.reqs[r.label] += float64(max(r.n, 1))
	if r.op == opCond {
		w.cond++
	}
	if r.label == "PUT fold marker" || r.label == "PUT group pack" {
		// A new object that no other writer's decision reads (a marker
		// only times waits): the request commutes with every other
		// writer's, so it is applied at once rather than enumerated. A
		// death around it is a death before the writer's next request.
		x.clock++
		v := r.apply()
		x.logf("writer %d (commit %d): %s -> %s", w.agent, w.id, r.label, describe(v))
		done(v, faultNone)
		return
	}
	x.ops = append(x.ops, &pendingOp{w: w, r: &r, done: done, label: r.label})
}

// sleep ends at once: a wait touches no shared state, so where it ends
// among the other writers' requests changes nothing they see (it
// commutes with them), and enumerating its positions would only repeat
// schedules. What a wait decides by the clock (a waiter's stall timeout)
// still varies: the clock is the number of steps taken.
func (x *xenv) sleep(w *writer, d time.Duration, done func()) {
	if w.crashed {
		return
	}
	x.clock++
	done()
}

func (x *xenv) finish(w *writer, gen int, why string) {
	if w.done {
		x.fail(fmt.Errorf("commit %d finished twice", w.id))
		return
	}
	w.done = true
	x.logf("commit %d (writer %d) finished: generation %d %s", w.id, w.agent, gen, why)
	if gen > 0 {
		c := x.st.cur
		if gen > c.gen || c.ids[gen-1] != w.id {
			x.fail(fmt.Errorf("commit %d reported generation %d, which holds another publication", w.id, gen))
		}
		for id, g := range x.reported {
			if g == gen {
				x.fail(fmt.Errorf("commits %d and %d both reported generation %d", id, w.id, gen))
			}
		}
		x.reported[w.id] = gen
	}
	x.startNext(w.agent, w.known)
}

func (x *xenv) registered(*writer) {}

func (x *xenv) fail(err error) {
	if x.err == nil {
		x.err = err
	}
}

func (x *xenv) logf(format string, a ...any) {
	x.trace = append(x.trace, fmt.Sprintf("step %3d: ", x.steps)+fmt.Sprintf(format, a...))
}

func (x *xenv) startNext(agent, known int) {
	if x.left[agent] == 0 {
		return
	}
	x.left[agent]--
	x.nextID++
	w := &writer{agent: agent, id: x.nextID, known: known, reqs: map[string]float64{}}
	w.began = x.now()
	w.proto = newV4(x.params, 7)
	x.writers = append(x.writers, w)
	w.proto.begin(x, w)
}

// step applies one outstanding operation chosen by the schedule.
// Choices: which operation, then (if faults remain) which fault.
func (x *xenv) step() {
	i := x.choose(len(x.ops), false)
	op := x.ops[i]
	x.ops = append(x.ops[:i], x.ops[i+1:]...)
	x.steps++
	x.clock++
	if op.w.crashed {
		return
	}
	// Faults: 0 none, 1 die before, 2 die after applying, and for a
	// conditional write 3 reply lost after applying, 4 reply lost, not
	// applied.
	f := 0
	if x.faults < x.sc.Faults {
		n := 3
		if op.r.op == opCond {
			n = 5
		}
		f = x.choose(n, true)
	}
	if f != 0 {
		x.faults++
	}
	name := []string{"", " (dies before)", " (dies after)", " (reply lost, applied)", " (reply lost, not applied)"}[f]
	if f == 1 {
		x.logf("writer %d (commit %d): %s%s", op.w.agent, op.w.id, op.label, name)
		op.w.crashed = true
		x.startNext(op.w.agent, op.w.known)
		return
	}
	var v any
	if f != 4 {
		v = op.r.apply()
	}
	x.logf("writer %d (commit %d): %s%s -> %s", op.w.agent, op.w.id, op.label, name, describe(v))
	switch f {
	case 2:
		op.w.crashed = true
		x.startNext(op.w.agent, op.w.known)
	case 3, 4:
		op.done(false, faultAmbiguous)
	default:
		op.done(v, faultNone)
	}
}

func describe(v any) string {
	switch v := v.(type) {
	case *cur:
		return fmt.Sprintf("generation %d %v", v.gen, v.ids)
	case listing:
		return fmt.Sprintf("%v", v.keys)
	case nil:
		return "ok"
	}
	return fmt.Sprint(v)
}

// check is the end-of-schedule audit: the invariants of
// docs/publication.md the model can see.
func (x *xenv) check(cut bool) {
	if err := audit(x.st, x.reported); err != nil {
		x.fail(err)
	}
	if cut {
		return
	}
	for _, w := range x.writers {
		if !w.done && !w.crashed {
			x.fail(fmt.Errorf("commit %d neither finished nor crashed with nothing left to do", w.id))
		}
	}
}

// runSchedule runs one schedule; choose picks among n options.
func runSchedule(sc Scope, choose func(n int, fault bool) int, seed uint64) (x *xenv, cut bool) {
	p := DefaultParams(200*time.Millisecond, 20*time.Millisecond)
	p.Conflict = sc.Conflict
	p.K, p.M = 4, 4 // small windows, so expiry and re-registration are reached
	p.mutateFoldAccepted = sc.mutate
	x = &xenv{sc: sc, st: newStore(), reported: map[int]int{}, choose: choose,
		rng: rand.New(rand.NewPCG(seed, 1)), left: map[int]int{}, params: p}
	for a := 0; a < sc.Writers; a++ {
		x.left[a] = max(sc.Commits, 1)
	}
	for a := 0; a < sc.Writers; a++ {
		x.startNext(a, 0)
	}
	for len(x.ops) > 0 && x.err == nil {
		if x.steps >= sc.Depth {
			cut = true
			break
		}
		x.step()
	}
	x.check(cut)
	return x, cut
}

// Explore runs every schedule of sc up to its bounds and returns the
// first failure, if any.
func Explore(sc Scope) (Stats, *Failure) {
	var st Stats
	var prefix []int
	for {
		var choices, widths []int
		choose := func(n int, _ bool) int {
			c := 0
			if len(choices) < len(prefix) {
				c = prefix[len(choices)]
			}
			choices = append(choices, c)
			widths = append(widths, n)
			return c
		}
		x, cut := runSchedule(sc, choose, 1)
		st.Schedules++
		if cut {
			st.Cut++
		}
		if x.faults > 0 {
			st.Faulted++
		}
		if x.err != nil {
			return st, &Failure{Choices: choices, Err: x.err, Trace: x.trace}
		}
		// Backtrack: the deepest choice with an untried option.
		i := len(choices) - 1
		for i >= 0 && choices[i]+1 >= widths[i] {
			i--
		}
		if i < 0 {
			return st, nil
		}
		prefix = append(choices[:i:i], choices[i]+1)
	}
}

// Sample runs n schedules drawn from seed (each schedule from its own
// seed, seed+i, so any one replays alone).
func Sample(sc Scope, seed uint64, n int) (Stats, *Failure, uint64) {
	var st Stats
	for i := 0; i < n; i++ {
		s := seed + uint64(i)
		f, x, cut := sampleOne(sc, s)
		st.Schedules++
		if cut {
			st.Cut++
		}
		if x.faults > 0 {
			st.Faulted++
		}
		if f != nil {
			return st, f, s
		}
	}
	return st, nil, 0
}

func sampleOne(sc Scope, seed uint64) (*Failure, *xenv, bool) {
	rng := rand.New(rand.NewPCG(seed, 2))
	var choices []int
	choose := func(n int, fault bool) int {
		c := rng.IntN(n)
		if fault && rng.IntN(8) != 0 {
			c = 0 // most steps are clean; Scope.Faults bounds the rest
		}
		choices = append(choices, c)
		return c
	}
	x, cut := runSchedule(sc, choose, seed)
	if x.err != nil {
		return &Failure{Choices: choices, Err: x.err, Trace: x.trace}, x, cut
	}
	return nil, x, cut
}

// Replay runs one schedule given by its choices and returns its trace and
// the invariant it broke, if any.
func Replay(sc Scope, choices []int) ([]string, error) {
	i := 0
	choose := func(n int, _ bool) int {
		c := 0
		if i < len(choices) {
			c = choices[i] % n
		}
		i++
		return c
	}
	x, _ := runSchedule(sc, choose, 1)
	return x.trace, x.err
}
