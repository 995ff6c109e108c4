package pubmodel

import (
	"math/bits"
	"slices"
	"time"
)

// Params are the design's constants (docs/publication.md, "Constants").
type Params struct {
	K int // a version built on G is includable while current's generation - G < K
	M int // at most M proposals per group write
	// The writer's estimate of one conditional write of `current` (queue
	// included); a real writer measures its own. Waiting is timed from it.
	CondEstimate time.Duration
	RTT          time.Duration // the writer's estimate of one round trip
	// Gather: a folder that learned of the write before its fold waits
	// until this long after that write landed before it LISTs, so that
	// the commits that started when that write was seen (a waiter whose
	// call ended, an agent's next call) are in its group, not the next.
	Gather time.Duration
	// Stall: `current` unmoved this many estimates (plus a second) since
	// the waiter last saw it move: the designated folder is presumed gone,
	// the waiter folds itself. Liveness only.
	Stall float64
	// Conflict: the probability that a version built on G does not merge
	// cleanly onto a fold that changed anything since G.
	Conflict float64
	// Chain: a commit due while its agent's previous call is still
	// pending registers at once, chained to that call's newest version
	// (built on its head, no read of `current`), instead of starting once
	// the previous call is accepted. A fold takes a chained version only
	// after its predecessor (accepted before, or a member before it in the
	// same fold) and declines it when its predecessor's version is not the
	// one accepted or taken.
	Chain bool
	// Turn: the folder's own work between the fold's last reply and its
	// uploads (merging, re-parenting, packing: CPU the model otherwise
	// takes as free). Zero in the design's figures; set to calibrate the
	// model's cycle to a measured one.
	Turn time.Duration
	// mutateFoldAccepted breaks the design on purpose (a fold takes
	// proposals whose ID `current` already names), so a test can show
	// that the explorer catches a broken invariant.
	mutateFoldAccepted bool
}

// DefaultParams are the constants docs/publication.md settles on.
func DefaultParams(cond, rtt time.Duration) Params {
	return Params{K: 128, M: 128, CondEstimate: cond, RTT: rtt,
		Gather: 7 * rtt, Stall: 4}
}

func (p Params) window() int { return p.K + p.M }

// v4 is the publication protocol of docs/publication.md: register a
// proposal keyed by (parent generation, publication ID), LIST, and the
// first pending proposal in fold order folds every pending one that
// merges cleanly onto `current` in one conditional write; the others
// wait, reading `current`, and find their IDs there.
type v4 struct {
	p   Params
	ver int // G of our newest registered version; -1: none yet
	// first is G of our first version: acceptance of any version lies
	// above it.
	first    int
	c        *cur   // the `current` we last read
	ahead    []pkey // pending proposals before ours at our last LIST
	lastMove time.Duration
	gathered bool         // this fold already waited for the gather
	marks    map[int]mark // fold markers at our last LIST
	seed     uint64       // conflict draws
	on       *pkey        // our newest version is chained to this version of pred's
}

func newV4(p Params, seed uint64) *v4 { return &v4{p: p, ver: -1, first: -1, seed: seed} }

func (v *v4) begin(e env, w *writer) { v.read(e, w, false) }

// predOf returns the protocol state of the call w is chained behind
// while that call is not known accepted, or nil.
func predOf(w *writer) *v4 {
	if w.pred == nil || w.pred.gen > 0 {
		return nil
	}
	return w.pred.proto.(*v4)
}

// conflicts says whether version k fails to merge onto a fold that
// changed something since its parent (fresh: nothing did): a
// deterministic draw per version, so every folder decides the same.
func (v *v4) conflicts(k pkey, fresh bool) bool {
	if v.p.Conflict <= 0 || fresh {
		return false // nothing changed since it was built
	}
	h := mix(v.seed ^ uint64(k.ID)*0x9e3779b97f4a7c15 ^ uint64(k.G)<<32)
	return float64(h>>11)/(1<<53) < v.p.Conflict
}

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// catchUpGets is what reaching k generations ahead costs with rollups
// (docs/storage.md: at most log2(k)+2 packs).
func catchUpGets(k int) int {
	if k <= 2 {
		return k
	}
	return bits.Len(uint(k-1)) + 1
}

// catchUp counts reaching generation g from what w's cache reaches
// (reported on its own row).
func catchUp(w *writer, g int) {
	if k := g - w.known; k > 0 {
		w.reqs["GET catch-up"] += float64(catchUpGets(k))
		w.known = g
	}
}

func getCurrent(s *store) req {
	return req{op: opGet, label: "GET current", apply: func() any { return s.cur }}
}

// read is GET current, then the decision every path comes back to. After
// a fold of ours (folded) the next step is a LIST, not a wait.
func (v *v4) read(e env, w *writer, folded bool) {
	s := e.store()
	e.send(w, getCurrent(s), func(r any, f fault) {
		if f != faultNone {
			v.read(e, w, folded)
			return
		}
		v.onCurrent(e, w, r.(*cur), folded)
	})
}

func (v *v4) onCurrent(e env, w *writer, c *cur, folded bool) {
	if v.c == nil || c.gen > v.c.gen {
		v.lastMove = e.now()
	}
	v.c = c
	if v.ver >= 0 {
		if g := v.acceptance(w, c); g > 0 {
			// Included by another's write: our directory gets the tree of
			// generation g, from the group's pack and what came before it.
			w.reqs["GET own generation"]++
			catchUp(w, g-1)
			w.known = g
			e.finish(w, g, "")
			return
		}
	}
	if v.ver < 0 || v.dead(c, w) {
		v.register(e, w, c)
		return
	}
	if folded {
		v.list(e, w, false)
		return
	}
	if v.believesFirst(c) {
		v.gathered = false
		v.list(e, w, false)
		return
	}
	v.wait(e, w)
}

// acceptance returns the generation that accepted our ID, or 0. Any
// version's acceptance lies above v.first; `current` lists the newest
// K+M IDs, and a longer look back reads the history (counted).
func (v *v4) acceptance(w *writer, c *cur) int {
	if g := c.acceptedAt(w.id, v.p.window()); g > 0 {
		return g
	}
	if c.gen-v.p.window() > v.first {
		w.reqs["GET history"]++
		return c.acceptedAt(w.id, 0)
	}
	return 0
}

// dead: our newest version can no longer be included (declined, or past
// the K window, or chained to a version of our predecessor that is not
// the one it has accepted or can still have accepted), so we must build
// a new one, keeping our ID.
func (v *v4) dead(c *cur, w *writer) bool {
	if d, ok := c.declined[w.id]; ok && d == v.ver {
		return true
	}
	if v.on != nil {
		if g := c.acceptedAt(v.on.ID, v.p.window()); g > 0 {
			if c.vers[g-1] != v.on.G {
				return true
			}
		} else if pv := w.pred.proto.(*v4); pv.ver != v.on.G || w.pred.gen == 0 && pv.dead(c, w.pred) {
			return true
		}
	}
	return c.gen-v.ver >= v.p.K
}

// register PUTs our proposal built on c (a new version of our ID), or
// chained to our predecessor's newest version while that one is
// pending, and LISTs.
func (v *v4) register(e env, w *writer, c *cur) {
	s := e.store()
	k := pkey{G: c.gen, ID: w.id}
	var on *pkey
	if pv := predOf(w); pv != nil && c.acceptedAt(w.pred.id, v.p.window()) == 0 {
		if pv.dead(c, w.pred) {
			// Its version is being rebuilt: chain to the new one.
			e.sleep(w, 2*v.p.RTT, func() { v.register(e, w, c) })
			return
		}
		// Built on the predecessor's newest version but keyed by the
		// state we read, as an unchained version registered now would
		// be (the fold order still puts it after its predecessor: an
		// older or the same generation, a smaller ID), so the K window
		// counts from there.
		k.G, on = c.gen, &pkey{G: pv.ver, ID: w.pred.id}
	} else {
		catchUp(w, c.gen)
	}
	e.send(w, req{op: opPut, label: "PUT proposal", apply: func() any {
		s.props[k] = true
		if on != nil {
			s.chain[k] = *on
		}
		if _, ok := s.born[k.ID]; !ok {
			s.born[k.ID] = w.began // the UUIDv7's instant
		}
		return nil
	}}, func(_ any, f fault) {
		if f != faultNone { // not applied: send it again
			v.register(e, w, c)
			return
		}
		if v.first < 0 {
			v.first = k.G
			e.registered(w)
		}
		v.ver, v.on = k.G, on
		v.list(e, w, false)
	})
}

// pending is the fold order on c: registered versions not accepted, not
// declined, built less than K generations before c, newest version per
// ID, sorted by (G, ID).
func (v *v4) pending(c *cur, keys []pkey) []pkey {
	newest := map[int]int{}
	for _, k := range keys {
		if g, ok := newest[k.ID]; !ok || k.G > g {
			newest[k.ID] = k.G
		}
	}
	var out []pkey
	for _, k := range keys {
		if newest[k.ID] != k.G || c.gen-k.G >= v.p.K {
			continue
		}
		if d, ok := c.declined[k.ID]; ok && d == k.G {
			continue
		}
		if !v.p.mutateFoldAccepted && c.acceptedAt(k.ID, v.p.window()) > 0 {
			continue
		}
		out = append(out, k)
	}
	return out
}

// list is LIST proposals/ from c's generation - K. The first pending
// proposal folds; the others wait. forced: fold whatever the order says
// (the designated folder has stalled).
func (v *v4) list(e env, w *writer, forced bool) {
	s := e.store()
	c := v.c
	e.send(w, req{op: opList, label: "LIST proposals", apply: func() any {
		return s.listAll(c.gen - v.p.K)
	}}, func(r any, f fault) {
		if f != faultNone {
			v.list(e, w, forced)
			return
		}
		l := r.(listing)
		v.marks = l.marks
		p := v.pending(c, l.keys)
		mine := -1
		for i, k := range p {
			if k.ID == w.id {
				mine = i
				break
			}
		}
		if mine < 0 {
			// Our version is not listed as pending: it was accepted or
			// declined since our read. Read again.
			v.read(e, w, false)
			return
		}
		if forced {
			v.fold(e, w, c, p)
			return
		}
		if mine == 0 {
			// We fold. If the write we read landed less than Gather ago,
			// the commits that started when it was seen are still
			// registering: LIST again once they are in.
			if d := v.landed(c) + v.p.Gather - e.now(); d > 0 && !v.gathered {
				v.gathered = true
				e.sleep(w, d, func() { v.list(e, w, false) })
				return
			}
			v.fold(e, w, c, p)
			return
		}
		v.ahead = p[:mine]
		v.wait(e, w)
	})
}

// believesFirst: every proposal ahead of ours at our last LIST is now
// accepted or declined in c, so we are probably the next folder (the LIST
// that gathers the fold confirms it).
func (v *v4) believesFirst(c *cur) bool {
	for _, k := range v.ahead {
		d, declined := c.declined[k.ID]
		if c.acceptedAt(k.ID, v.p.window()) == 0 && (!declined || d != k.G) && c.gen-k.G < v.p.K {
			return false
		}
	}
	return true
}

// landed estimates when the write of c reached the store: its writer
// sent it at c.sent, it held the key one estimate, plus a round trip.
func (v *v4) landed(c *cur) time.Duration {
	if c.gen == 0 {
		return 0
	}
	return c.sent + v.p.CondEstimate + v.p.RTT
}

// cycle estimates the time from one write's landing to the next one's:
// the gather, LIST, GET of the proposals, PUT of the group pack, then
// the conditional write.
func (v *v4) cycle() time.Duration {
	return v.p.Gather + 3*v.p.RTT + v.p.Turn + v.p.CondEstimate + v.p.RTT
}

// wait reads `current` when the write that should tell us something has
// landed, then every eighth of an estimate until it moves, and decides
// again. The write in flight is the fold of the first proposal ahead of
// ours. If its marker was listed, it took the proposals up to the
// marker's cut and its write lands about one estimate after the marker
// plus three round trips; if not, it has not listed yet and will take
// ours, listing about Gather after the write we read landed, or once its
// proposal was registered if later (registration instants come from
// the publication IDs: UUIDv7 carry their creation time). A proposal
// past the cut learns nothing from that write unless it is the first
// past the cut (it folds next): the others read after the write after
// it. Timing decides only how many reads a waiter makes and how soon it
// learns, never what is accepted.
func (v *v4) wait(e env, w *writer) {
	s := e.store()
	var folder *pkey
	var rest []pkey // proposals ahead of ours after the folder's
	for i, k := range v.ahead {
		if v.c.acceptedAt(k.ID, v.p.window()) == 0 {
			folder = &v.ahead[i]
			rest = v.ahead[i+1:]
			break
		}
	}
	var landF time.Duration
	inF, next := true, false
	if folder != nil {
		if m, ok := v.marks[folder.ID]; ok {
			landF = m.at + 3*v.p.RTT + v.p.Turn + v.p.CondEstimate
			inF = !m.cut.less(pkey{G: v.ver, ID: w.id})
			if !inF {
				next = true
				for _, k := range rest {
					if m.cut.less(k) && v.c.acceptedAt(k.ID, v.p.window()) == 0 {
						next = false
					}
				}
			}
		} else {
			start := max(v.landed(v.c)+v.p.Gather, s.born[folder.ID]+3*v.p.RTT)
			landF = start + v.cycle() - v.p.Gather
		}
	} else {
		landF = v.landed(v.c) + v.cycle()
	}
	target := landF + v.p.RTT
	if !inF && !next {
		target += v.cycle()
	}
	d := target - e.now()
	if d < 2*v.p.RTT {
		// Later than expected: read every eighth of an estimate.
		d = max(2*v.p.RTT, v.p.CondEstimate/8)
	}
	seen := v.c.gen
	e.sleep(w, d, func() {
		s := e.store()
		e.send(w, getCurrent(s), func(r any, f fault) {
			if f != faultNone {
				v.wait(e, w)
				return
			}
			c := r.(*cur)
			if c.gen > seen {
				v.onCurrent(e, w, c, false)
				return
			}
			v.c = c
			if e.now()-v.lastMove > v.stall(c) {
				v.list(e, w, true)
				return
			}
			v.wait(e, w)
		})
	})
}

// stall is how long `current` may stay unmoved before we fold without
// being first: Stall estimates plus a second, and one more estimate
// (plus the round trips of a fold) per pending proposal ahead of us
// after the first, so that when a folder dies the next in the fold
// order takes over alone instead of every waiter at once (each losing
// conditional write would hold the key for nothing).
func (v *v4) stall(c *cur) time.Duration {
	d := time.Duration(v.p.Stall*float64(v.p.CondEstimate)) + time.Second
	rank := -1
	for _, k := range v.ahead {
		if c.acceptedAt(k.ID, v.p.window()) == 0 {
			rank++
		}
	}
	return d + time.Duration(max(rank, 0))*(v.p.CondEstimate+4*v.p.RTT)
}

// fold takes the pending proposals in order, up to M, each that merges
// cleanly onto the fold so far, uploads the group pack and writes
// `current` conditionally on the ETag of c.
func (v *v4) fold(e env, w *writer, c *cur, p []pkey) {
	s := e.store()
	catchUp(w, c.gen)
	if len(p) > v.p.M {
		// At most M; our own is always among them (a forced fold may
		// find it further down the order).
		own := slices.IndexFunc(p, func(k pkey) bool { return k.ID == w.id })
		if own >= v.p.M {
			p = append(slices.Clip(p[:v.p.M-1]), p[own])
		} else {
			p = p[:v.p.M]
		}
	}
	var others []pkey
	for _, k := range p {
		if k.ID != w.id {
			others = append(others, k)
		}
		// A chained version whose predecessor was accepted before:
		// its base is that predecessor's proposal, read too.
		if on, ok := s.chain[k]; ok && c.acceptedAt(on.ID, v.p.window()) > 0 {
			w.reqs["GET proposal"]++
		}
	}
	after := func(present map[pkey]bool) {
		var members, declined []pkey
		chained, ownOut := false, false
		for _, k := range p {
			if k.ID != w.id && !present[k] {
				continue // gone: cleaned up after it was accepted
			}
			ok, fresh := true, c.gen == k.G && len(members) == 0
			on, is := s.chain[k]
			if is {
				// Only after its predecessor, and only on the version
				// of it that is accepted or taken.
				if g := c.acceptedAt(on.ID, v.p.window()); g > 0 {
					ok, fresh = c.vers[g-1] == on.G, g == c.gen && len(members) == 0
				} else {
					i := slices.Index(members, on)
					ok, fresh = i >= 0, i == len(members)-1
				}
			}
			if !ok || v.conflicts(k, fresh) {
				// Ours too, like any other (publish: the folder's
				// write accepts the others; it rebuilds after).
				ownOut = ownOut || ok && k.ID == w.id
				declined = append(declined, k)
				continue
			}
			chained = chained || is
			members = append(members, k)
		}
		if len(members) == 0 && ownOut {
			// Nothing merges, ours included: a write that only declines
			// would spend the key; ours is rebuilt on c and registered,
			// and the fold goes on from a new LIST.
			v.register(e, w, c)
			return
		}
		if len(members) == 0 {
			// Our own chained version without its predecessor (a
			// takeover): read again until our predecessor settles it.
			e.sleep(w, 2*v.p.RTT, func() { v.read(e, w, false) })
			return
		}
		next := c.extend(members, declined)
		next.sent = e.now()
		next.checked = true
		group := len(members) > 1 || members[0].G != c.gen || chained
		if group {
			s.packSeq++
			next.pack = s.packSeq
		}
		write := func() {
			w.cond++
			e.send(w, req{op: opCond, label: "CAS current", key: "current", apply: func() any {
				return s.replace(c.etag, next)
			}}, func(r any, f fault) {
				if f == faultAmbiguous {
					v.read(e, w, true) // our ID in current decides
					return
				}
				if r.(bool) {
					for i, m := range members {
						if m.ID == w.id {
							w.known = next.gen
							e.finish(w, c.gen+1+i, "")
							return
						}
					}
					v.read(e, w, false) // ours declined (chained, its predecessor left out)
					return
				}
				w.lost++
				v.read(e, w, true)
			})
		}
		upload := func() {
			if !group {
				write()
				return
			}
			e.send(w, req{op: opPut, label: "PUT group pack", apply: func() any {
				s.packs[next.pack] = true
				return nil
			}},
				func(_ any, f fault) {
					if f != faultNone {
						v.read(e, w, true)
						return
					}
					write()
				})
		}
		upload()
	}
	if v.p.Turn > 0 {
		// The folder's own work comes before the write it times.
		merged := after
		after = func(present map[pkey]bool) { e.sleep(w, v.p.Turn, func() { merged(present) }) }
	}
	if len(others) == 0 {
		after(nil)
		return
	}
	me := pkey{G: v.ver, ID: w.id}
	cut := p[len(p)-1]
	e.send(w, req{op: opPut, label: "PUT fold marker", apply: func() any {
		s.marks[me] = mark{cut: cut, at: e.now()}
		return nil
	}}, func(any, fault) {})
	e.send(w, req{op: opGet, label: "GET proposal", n: len(others), apply: func() any {
		present := map[pkey]bool{}
		for _, k := range others {
			present[k] = s.props[k]
		}
		return present
	}}, func(r any, f fault) {
		if f != faultNone {
			v.read(e, w, true)
			return
		}
		after(r.(map[pkey]bool))
	})
}
