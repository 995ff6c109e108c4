package pubmodel

import (
	"fmt"
	"time"
)

// today is format v3's publication roughly as docs/storage.md §4 and §4B
// describe it for writers on separate machines (no local turns): a plain
// attempt (GET current, PUT pack, conditional write), and after a lost
// race, or at once when others published since the agent's last commit,
// group commit: register, take the generation's lead marker with a
// conditional create, the leader gathers and includes the registrations
// on its generation, the followers read `current` until it moves. Backoff
// and retry limits as today's defaults. A call whose retries run out ends
// REMOTE_BUSY and the agent goes on to its next commit. It is a rough
// model: its purpose is to show where today's requests and waits go at
// cloud latency.
type today struct {
	cfg      Config
	attempt  int
	lastLost time.Duration // window of the last lost attempt
	on       []int         // generations we registered or wrote on
	c        *cur
	startGen int
}

func newToday(cfg Config) *today { return &today{cfg: cfg} }

const (
	todayRetries   = 8
	todayFirstWait = 25 * time.Millisecond
	todayMaxWait   = 2 * time.Second
)

func (t *today) begin(e env, w *writer) {
	t.startGen = w.known
	t.read(e, w)
}

func (t *today) read(e env, w *writer) {
	s := e.store()
	e.send(w, getCurrent(s), func(r any, f fault) {
		if f != faultNone {
			t.read(e, w)
			return
		}
		c := r.(*cur)
		t.c = c
		if g := t.accepted(c, w.id); g > 0 {
			e.finish(w, g, "")
			return
		}
		if k := c.gen - w.known; k > 0 {
			w.reqs["GET catch-up"] += float64(catchUpGets(k))
			w.known = c.gen
		}
		t.attempt++
		if t.attempt > todayRetries+1 {
			e.finish(w, 0, "REMOTE_BUSY")
			return
		}
		contention := t.startGen > 0 && c.gen > t.startGen
		if t.attempt == 1 && !contention {
			t.plain(e, w, c)
			return
		}
		t.register(e, w, c)
	})
}

// accepted looks for our ID in the writes on the generations we
// attempted on (today's acceptedSince; the history GETs are not counted).
func (t *today) accepted(c *cur, id int) int {
	for _, g := range t.on {
		for h := g + 1; h <= c.gen; h++ {
			if c.ids[h-1] == id {
				return h
			}
		}
	}
	return 0
}

func (t *today) plain(e env, w *writer, c *cur) {
	began := e.now()
	t.on = append(t.on, c.gen)
	e.send(w, req{op: opPut, label: "PUT pack", apply: func() any { return nil }}, func(any, fault) {
		t.write(e, w, c, nil, began)
	})
}

// write is the conditional write of `current` on c naming us and members.
func (t *today) write(e env, w *writer, c *cur, members []pkey, began time.Duration) {
	s := e.store()
	all := append([]pkey{{G: c.gen, ID: w.id}}, members...)
	next := c.extend(all, nil)
	w.cond++
	e.send(w, req{op: opCond, label: "CAS current", key: "current", apply: func() any {
		return s.replace(c.etag, next)
	}}, func(r any, f fault) {
		if f == faultAmbiguous {
			t.read(e, w)
			return
		}
		if r.(bool) {
			e.finish(w, c.gen+1, "")
			return
		}
		w.lost++
		t.lastLost = e.now() - began
		t.backoff(e, w)
	})
}

func (t *today) backoff(e env, w *writer) {
	ceil := max(todayFirstWait, t.lastLost)
	if t.attempt > 1 || len(t.on) > 0 {
		ceil = todayFirstWait // a registering retry is not stretched
	}
	ceil = min(todayMaxWait, ceil<<min(t.attempt-1, 20))
	d := time.Duration(e.rand().Int64N(int64(ceil) + 1))
	e.sleep(w, d, func() { t.read(e, w) })
}

// register: PUT the registration on c, HEAD the lead marker, create it
// when absent; lead or follow.
func (t *today) register(e env, w *writer, c *cur) {
	s := e.store()
	k := pkey{G: c.gen, ID: w.id}
	t.on = append(t.on, c.gen)
	marker := fmt.Sprintf("lead-%d", c.gen)
	began := e.now()
	e.send(w, req{op: opPut, label: "PUT registration", apply: func() any { s.props[k] = true; return nil }}, func(any, fault) {
		e.send(w, req{op: opGet, label: "HEAD lead", apply: func() any { return s.objects[marker] }}, func(r any, _ fault) {
			if r.(bool) {
				t.follow(e, w, c, 0, 0)
				return
			}
			w.cond++
			e.send(w, req{op: opCond, label: "CREATE lead", key: marker, apply: func() any {
				if s.objects[marker] {
					return false
				}
				s.objects[marker] = true
				return true
			}}, func(r any, _ fault) {
				if r != true {
					w.lost++
					t.follow(e, w, c, 0, 0)
					return
				}
				t.lead(e, w, c, began)
			})
		})
	})
}

func (t *today) lead(e env, w *writer, c *cur, began time.Duration) {
	s := e.store()
	e.sleep(w, todayFirstWait+2*t.cfg.RTT, func() {
		e.send(w, req{op: opList, label: "LIST proposals", apply: func() any { return s.list(c.gen - 1) }}, func(r any, _ fault) {
			var members []pkey
			for _, k := range r.([]pkey) {
				if k.G == c.gen && k.ID != w.id && len(members) < 127 {
					members = append(members, k)
				}
			}
			put := func() {
				e.send(w, req{op: opPut, label: "PUT pack", n: 2, apply: func() any { return nil }}, func(any, fault) {
					t.write(e, w, c, members, began)
				})
			}
			if len(members) == 0 {
				put()
				return
			}
			e.send(w, req{op: opGet, label: "GET proposal", n: len(members), apply: func() any { return nil }}, func(any, fault) {
				w.cond += len(members)
				e.send(w, req{op: opCond, label: "CREATE member pack", n: len(members),
					key: fmt.Sprintf("member-%d-%d", c.gen, w.id), apply: func() any { return nil }},
					func(any, fault) { put() })
			})
		})
	})
}

// follow reads `current` until it moves past c (at most 5 s).
func (t *today) follow(e env, w *writer, c *cur, round int, waited time.Duration) {
	s := e.store()
	d := todayFirstWait + 5*t.cfg.RTT
	if round > 0 {
		d = min(250*time.Millisecond, max(2*t.cfg.RTT, time.Duration(float64(d)*pow15(round))))
	}
	e.sleep(w, d, func() {
		e.send(w, getCurrent(s), func(r any, _ fault) {
			n := r.(*cur)
			if n.gen > c.gen || waited+d > 5*time.Second {
				if g := t.accepted(n, w.id); g > 0 {
					e.finish(w, g, "")
					return
				}
				t.read(e, w)
				return
			}
			t.follow(e, w, c, round+1, waited+d)
		})
	})
}

func pow15(n int) float64 {
	f := 1.0
	for range n {
		f *= 1.5
	}
	return f
}
