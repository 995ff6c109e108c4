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
	// read: the agent's last GET of `current` before it knew (the one
	// that showed its acceptance, unless it wrote that state itself);
	// reads: its GETs of `current` from the registration on.
	readStart, readEnd time.Duration
	reads              int
	agent              int // the agent's index: its commits are in order
}

// landing is one won write of `current`: when the store applied it, the
// generations it added (first..last) and when it was sent.
type landing struct {
	sent, at    time.Duration
	first, last uint64
}

// landingOf finds the landing (ls sorted by generation) whose write
// accepted generation g.
func landingOf(ls []landing, g uint64) (int, bool) {
	return slices.BinarySearchFunc(ls, g, func(l landing, g uint64) int {
		switch {
		case l.last < g:
			return -1
		case l.first > g:
			return 1
		}
		return 0
	})
}

// rawTimes are commitTimes on the real clock.
type rawTimes struct {
	instant, start, registered, learned time.Time
	gen                                 uint64
	measured                            bool
	read                                req
	reads                               int
}

// req is one request an agent's publisher made (Config.Breakdown).
type req struct {
	kind       byte // see the reqKind constants
	start, end time.Time
	gen        uint64 // reqWrite: the generation the won write reached
}

const (
	reqCurrent = 'c' // GET current
	reqList    = 'l' // LIST proposals/
	reqGet     = 'g' // any other GET (proposals, segments, registered descriptors)
	reqUpload  = 'u' // PUT of a group pack or a segment
	reqPut     = 'p' // any other PUT (registrations, fold markers)
	reqWrite   = 'w' // a won conditional write of `current`
	reqCatchUp = 'k' // a GET of the agent's catch-up (outside publish)
)

// get is a GET of catch-up, noted when the breakdown is on.
func (a *v4agent) get(ctx context.Context, key string) ([]byte, error) {
	t := time.Now()
	data, err := a.store.get(ctx, key)
	if a.noting {
		a.note(reqCatchUp, t, 0)
	}
	return data, err
}

// note records a request of the agent's publisher.
func (a *v4agent) note(kind byte, start time.Time, gen uint64) {
	a.reqMu.Lock()
	defer a.reqMu.Unlock()
	a.reqs = append(a.reqs, req{kind, start, time.Now(), gen})
	if kind == reqCurrent {
		a.lastRead = a.reqs[len(a.reqs)-1]
		a.reads++
	}
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
	t := time.Now()
	defer s.a.note(reqList, t, 0)
	return remote.ListAfter(ctx, s.Store, prefix, after)
}

func (s agentStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	t := time.Now()
	data, etag, err := s.Store.Get(ctx, key)
	if key == remote.CurrentKey {
		s.a.note(reqCurrent, t, 0)
	} else {
		s.a.note(reqGet, t, 0)
	}
	return data, etag, err
}

func (s agentStore) Put(ctx context.Context, key string, data []byte) error {
	t := time.Now()
	err := s.Store.Put(ctx, key, data)
	kind := byte(reqPut)
	if strings.HasPrefix(key, remote.GroupsPrefix) || strings.HasPrefix(key, remote.SegmentsPrefix) {
		kind = reqUpload
	}
	s.a.note(kind, t, 0)
	if err == nil && key == s.a.builtKey {
		s.a.regAt = time.Now()
		s.a.reqMu.Lock()
		s.a.reads = 0
		s.a.reqMu.Unlock()
	}
	return err
}

func (s agentStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	t := time.Now()
	tag, err := s.Store.ReplaceIfMatch(ctx, key, data, etag)
	if err == nil && key == remote.CurrentKey {
		if m, derr := remote.DecodeManifestV4(data); derr == nil {
			s.a.note(reqWrite, t, m.Generation)
		}
	}
	return tag, err
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
	// Parts split the turn by the requests of the next write's folder.
	Parts TurnParts
	// Tails decompose the commits slower than Slow and the slowest 5%
	// against their agent's previous commit and the writes' last LISTs.
	Tails [2]Tail
}

// Tail decomposes a set of slow commits (means): Queue, behind the
// agent's previous commit; of that previous commit, its learning
// (PrevLearn: its accepting landing to the agent knowing) and how many
// spanned two cycles or more (PrevTwo); Reg, the commit's registration
// after its accepting landing's predecessor (the landing it started
// after, if queued); ToLast, the registration less the sending of the
// last LIST of the first write sent after it (positive: that write's
// folder had listed without it, Missed counts those); Fold, the
// registration to the accepting landing; Learn, its own learning; and
// Cycles as in Phases. Made and MissedQ split the queued commits by
// whether the first write sent after their registration took them.
type Tail struct {
	Name                                string
	N, Queued, PrevTwo, Missed          int
	Made, MissedQ, PrevQueued           int
	PrevLat, Gap, PrevToLast            time.Duration
	Queue, PrevLearn, Reg, ToLast, Fold time.Duration
	Learn, Latency, MadeLat, MissedQLat time.Duration
	Cycles                              [4]int
}

// TurnParts split the turn (a landing to the sending of the next write)
// by the requests of that write's folder: means over the measured
// writes whose folder LISTed after the landing before it.
type TurnParts struct {
	N int
	// Learned: the landing to the folder's read of `current` that told
	// it (its last before its first LIST after the landing) returning. Gather: the landing to the sending of the
	// gather's LIST (the folder's first sent after the gather's end by
	// its estimate; its first after the landing if none). Rounds: from
	// there to the sending of its last LIST; Lists: its LISTs after the
	// gather's. LastList: that LIST's round trip. Fold: its reply to the
	// first upload's sending (the GETs of what it added, Gets counting
	// the folder's GETs then; the fold; the registered descriptors).
	// Uploads: the first upload's sending to the last one's reply. Send:
	// from there (without uploads, from the last LIST's reply) to the
	// write's sending.
	Learned, Gather, Rounds, LastList, Fold, Uploads, Send time.Duration
	Lists, Gets                                            float64
	// Of the gather: Late, its LIST's sending after the gather's end by
	// the folder's estimate; Early, the folder's requests from its
	// first LIST after the landing to the last one's reply before the
	// gather's LIST (the reads of the fold while gathering, catch-up's
	// included), of the writes whose folder LISTed before it; CatchUps,
	// catch-up's GETs by the folder in the turn.
	Late, Early time.Duration
	Earlies     int
	CatchUps    float64
	// The measured commits registered in a turn: before the folder's
	// gather LIST was sent (InGather), between it and its last LIST's
	// sending (InRounds: the rounds took them), and after that (After:
	// they wait for the next fold); Reg, when they registered after the
	// landing (percentiles).
	InGather, InRounds, After int
	Reg                       Percentiles
}

// span is a req in model time since the run's start.
type span struct {
	kind       byte
	start, end time.Duration
	gen        uint64
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
	// Of the commits whose agent learned of their acceptance by a read
	// of `current` (not their folder's, who learn by their write's
	// reply), Readers: how many; ReadSent: the accepting landing to that
	// read's sending; ReadRTT: its round trip; AfterRead: its reply to
	// the agent knowing; Reads: the agent's GETs of `current` from the
	// registration to knowing.
	Readers                      int
	ReadSent, ReadRTT, AfterRead time.Duration
	Reads                        float64
}

// breakdown computes the Breakdown of cs against the landings ls, and
// the turn's parts from the agents' requests reqs; gather is when a
// folder LISTs for its gather, by its estimate, after the write it
// builds on was sent.
func breakdown(cs []commitTimes, ls []landing, reqs [][]span, warmup, slow, gather time.Duration) *Breakdown {
	ls = slices.Clone(ls)
	slices.SortFunc(ls, func(x, y landing) int { return int(x.last) - int(y.last) })
	b := &Breakdown{Slow: slow}
	b.Parts = turnParts(ls, reqs, cs, warmup, gather)
	b.Tails = tails(cs, ls, reqs, slow)
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
		i, ok := landingOf(ls, c.gen)
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
		if c.readEnd >= w.at {
			p.Readers++
			p.ReadSent += c.readStart - w.at
			p.ReadRTT += c.readEnd - c.readStart
			p.AfterRead += c.learned - c.readEnd
			p.Reads += float64(c.reads)
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
		if p.Readers > 0 {
			n := time.Duration(p.Readers)
			p.ReadSent, p.ReadRTT, p.AfterRead = p.ReadSent/n, p.ReadRTT/n, p.AfterRead/n
			p.Reads /= float64(p.Readers)
		}
	}
	return b
}

// turnParts splits each measured turn (ls sorted by generation) by the
// requests of the folder of its write.
func turnParts(ls []landing, reqs [][]span, cs []commitTimes, warmup, gather time.Duration) TurnParts {
	type turn struct{ at, gather, last, sent time.Duration }
	var turns []turn
	folder := map[uint64][]span{} // a won write's generation -> its folder's requests
	for _, rs := range reqs {
		for _, r := range rs {
			if r.kind == reqWrite {
				folder[r.gen] = rs
			}
		}
	}
	var t TurnParts
	for i := 1; i < len(ls); i++ {
		prev, l := ls[i-1], ls[i]
		rs := folder[l.last]
		if l.at < warmup || rs == nil {
			continue
		}
		var in []span // the folder's requests from the landing to its write
		for _, r := range rs {
			if r.end > prev.at && r.start < l.sent {
				in = append(in, r)
			}
		}
		var lists []span
		read := -1 // the folder's last read of `current` before its first LIST
		for j, r := range in {
			switch {
			case r.kind == reqList:
				lists = append(lists, r)
			case r.kind == reqCurrent && len(lists) == 0:
				read = j
			}
		}
		if read < 0 || len(lists) == 0 {
			continue
		}
		// Time is the write's sending in whole milliseconds: a little slack.
		g := slices.IndexFunc(lists, func(r span) bool { return r.start >= prev.sent+gather-3*time.Millisecond })
		g = max(g, 0)
		last := lists[len(lists)-1]
		upFirst, upLast, gets := time.Duration(-1), last.end, 0
		for _, r := range in {
			switch {
			case r.start < last.end:
			case r.kind == reqGet && upFirst < 0:
				gets++
			case r.kind == reqUpload:
				if upFirst < 0 {
					upFirst = r.start
				}
				upLast = max(upLast, r.end)
			}
		}
		if g > 0 {
			t.Earlies++
			var e time.Duration
			for _, r := range in {
				if r.start >= lists[0].start && r.start < lists[g].start && r.kind != reqList {
					e = max(e, r.end-lists[0].end)
				}
			}
			t.Early += e
		}
		for _, r := range in {
			if r.kind == reqCatchUp {
				t.CatchUps++
			}
		}
		t.Late += lists[g].start - (prev.sent + gather)
		turns = append(turns, turn{prev.at, lists[g].start, last.start, l.sent})
		t.N++
		t.Learned += in[read].end - prev.at
		t.Gather += lists[g].start - prev.at
		t.Rounds += last.start - lists[g].start
		t.Lists += float64(len(lists) - 1 - g)
		t.LastList += last.end - last.start
		if upFirst < 0 {
			upFirst = last.end
		}
		t.Fold += upFirst - last.end
		t.Uploads += upLast - upFirst
		t.Send += l.sent - upLast
		t.Gets += float64(gets)
	}
	if t.N > 0 {
		n := time.Duration(t.N)
		t.Learned, t.Gather, t.Rounds, t.LastList = t.Learned/n, t.Gather/n, t.Rounds/n, t.LastList/n
		t.Fold, t.Uploads, t.Send = t.Fold/n, t.Uploads/n, t.Send/n
		t.Lists, t.Gets = t.Lists/float64(t.N), t.Gets/float64(t.N)
		t.Late, t.CatchUps = t.Late/n, t.CatchUps/float64(t.N)
	}
	if t.Earlies > 0 {
		t.Early /= time.Duration(t.Earlies)
	}
	var regs []time.Duration
	for _, c := range cs {
		i := slices.IndexFunc(turns, func(u turn) bool { return c.registered > u.at && c.registered < u.sent })
		if !c.measured || i < 0 {
			continue
		}
		u := turns[i]
		regs = append(regs, c.registered-u.at)
		switch {
		case c.registered < u.gather:
			t.InGather++
		case c.registered < u.last:
			t.InRounds++
		default:
			t.After++
		}
	}
	t.Reg = percentiles(regs)
	return t
}

// tails decomposes the measured commits slower than slow and the slowest
// 5% (ls sorted by generation; cs in each agent's order).
func tails(cs []commitTimes, ls []landing, reqs [][]span, slow time.Duration) [2]Tail {
	lastList := map[uint64]time.Duration{} // a won write's last generation -> its folder's last LIST sent
	for _, rs := range reqs {
		var last time.Duration = -1
		for _, r := range rs {
			switch r.kind {
			case reqList:
				last = r.start
			case reqWrite:
				if last >= 0 {
					lastList[r.gen] = last
				}
			}
		}
	}
	accepting := func(g uint64) int {
		i, ok := landingOf(ls, g)
		if !ok {
			return -1
		}
		return i
	}
	var lat []time.Duration
	for _, c := range cs {
		if c.measured {
			lat = append(lat, c.learned-c.instant)
		}
	}
	slices.Sort(lat)
	var p95 time.Duration
	if len(lat) > 0 {
		p95 = lat[len(lat)*95/100]
	}
	out := [2]Tail{{Name: "slower than " + ms(slow)}, {Name: "slowest 5% (from " + ms(p95) + ")"}}
	for j, c := range cs {
		i := accepting(c.gen)
		if !c.measured || i < 0 {
			continue
		}
		l := c.learned - c.instant
		for k, t := range []*Tail{&out[0], &out[1]} {
			if k == 0 && l <= slow || k == 1 && l < p95 {
				continue
			}
			t.N++
			t.Latency += l
			t.Queue += c.start - c.instant
			queued := c.start-c.instant > time.Millisecond
			if queued {
				t.Queued++
			}
			if j > 0 && cs[j-1].agent == c.agent {
				pc := cs[j-1]
				if pi := accepting(pc.gen); pi >= 0 {
					t.PrevLearn += pc.learned - ls[pi].at
					t.PrevLat += pc.learned - pc.instant
					t.Gap += c.instant - pc.instant
					if pc.start-pc.instant > time.Millisecond {
						t.PrevQueued++
					}
					if f := slices.IndexFunc(ls, func(x landing) bool { return x.sent > pc.registered }); f >= 0 {
						if ll, ok := lastList[ls[f].last]; ok {
							t.PrevToLast += pc.registered - ll
						}
					}
					n := 0
					for q := pi; q >= 0 && ls[q].at > pc.registered; q-- {
						n++
					}
					if n >= 2 {
						t.PrevTwo++
					}
				}
			}
			n := 0
			for q := i; q >= 0 && ls[q].at > c.registered; q-- {
				n++
			}
			t.Cycles[min(n, 3)]++
			if i-n >= 0 {
				t.Reg += c.registered - ls[i-n].at
			}
			// The first write sent after the registration.
			f := slices.IndexFunc(ls, func(x landing) bool { return x.sent > c.registered })
			missed := false
			if f >= 0 {
				if ll, ok := lastList[ls[f].last]; ok {
					t.ToLast += c.registered - ll
					missed = c.registered > ll
				}
			}
			if missed {
				t.Missed++
			}
			if queued && missed {
				t.MissedQ++
				t.MissedQLat += l
			} else if queued {
				t.Made++
				t.MadeLat += l
			}
			t.Fold += ls[i].at - c.registered
			t.Learn += c.learned - ls[i].at
		}
	}
	for k := range out {
		t := &out[k]
		if t.N == 0 {
			continue
		}
		n := time.Duration(t.N)
		t.Latency, t.Queue, t.Reg, t.ToLast, t.Fold, t.Learn = t.Latency/n, t.Queue/n, t.Reg/n, t.ToLast/n, t.Fold/n, t.Learn/n
		t.PrevLearn, t.PrevLat, t.Gap, t.PrevToLast = t.PrevLearn/n, t.PrevLat/n, t.Gap/n, t.PrevToLast/n
		if t.Made > 0 {
			t.MadeLat /= time.Duration(t.Made)
		}
		if t.MissedQ > 0 {
			t.MissedQLat /= time.Duration(t.MissedQ)
		}
	}
	return out
}

// ms1 is a duration in milliseconds to one decimal.
func ms1(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

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
	t := b.Parts
	fmt.Fprintf(&s, "\nThe turn by its folder's requests (%d writes; means): the landing to the folder's read of it returning %s; to its gather's LIST sent %s; its rounds after the gather %s (%.2f LISTs); the last LIST's round trip %s; its reply to the first upload %s (%.2f GETs); the uploads %s; to the write's sending %s. The gather's LIST was sent %s after the gather's end by the folder's estimate; of %d folders that LISTed before it, their requests from that LIST's reply took %s; %.2f GETs of catch-up by the folder in the turn. Registered in a turn: %d before its gather's LIST, %d before its last LIST, %d after (for the next fold); after the landing p50 %s, p90 %s, p99 %s.\n",
		t.N, ms1(t.Learned), ms1(t.Gather), ms1(t.Rounds), t.Lists, ms1(t.LastList), ms1(t.Fold), t.Gets, ms1(t.Uploads), ms1(t.Send), ms1(t.Late), t.Earlies, ms1(t.Early), t.CatchUps,
		t.InGather, t.InRounds, t.After, ms(t.Reg.P50), ms(t.Reg.P90), ms(t.Reg.P99))
	for _, row := range []struct {
		name string
		p    Phases
	}{{"all measured", b.All}, {"slower than " + ms(b.Slow), b.Slows}} {
		p := row.p
		fmt.Fprintf(&s, "Learning, %s (%d of %d by a read of `current`; means): the landing to the read's sending %s, its round trip %s, its reply to the agent knowing %s; %.2f reads from the registration.\n",
			row.name, p.Readers, p.N, ms1(p.ReadSent), ms1(p.ReadRTT), ms1(p.AfterRead), p.Reads)
	}
	s.WriteString("\nThe tail against the agent's previous commit and the writes' last LISTs (means; *prev*: the agent's previous commit; *reg*: the registration after the landing before its accepting write's cycle; *to last LIST*: the registration less the sending of the last LIST of the first write sent after it, missed when positive; *queued made / missed*: queued commits that first write took or not, with their mean latency):\n\n")
	s.WriteString("| commits | n | latency | queued | queue | gap after prev's instant | prev's latency | prev queued | prev's registration to last LIST | prev's learning | prev of 2+ cycles | reg | to last LIST | missed | queued made / missed | registration to accepting landing | learning | 1 / 2 / 3+ cycles |\n")
	s.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |\n")
	for _, t := range b.Tails {
		fmt.Fprintf(&s, "| %s | %d | %s | %d | %s | %s | %s | %d | %s | %s | %d | %s | %s | %d | %d (%s) / %d (%s) | %s | %s | %d / %d / %d |\n", t.Name, t.N, ms(t.Latency), t.Queued, ms(t.Queue),
			ms(t.Gap), ms(t.PrevLat), t.PrevQueued, ms1(t.PrevToLast), ms1(t.PrevLearn), t.PrevTwo, ms1(t.Reg), ms1(t.ToLast), t.Missed, t.Made, ms(t.MadeLat), t.MissedQ, ms(t.MissedQLat), ms(t.Fold), ms1(t.Learn), t.Cycles[1], t.Cycles[2], t.Cycles[3])
	}
	return s.String()
}
