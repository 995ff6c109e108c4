package pubmodel

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// pkey names a registered proposal version: proposals/<G>-<id>, the
// version of publication id built on generation G. Keys sort by (G, id),
// which is also the fold order.
type pkey struct {
	G  int
	ID int
}

func (a pkey) less(b pkey) bool {
	if a.G != b.G {
		return a.G < b.G
	}
	return a.ID < b.ID
}

// cur is one value of `current`. Values are immutable once stored: a
// write builds a new one, so a reader may keep the one it read.
type cur struct {
	gen  int
	etag int   // 0: absent (the empty notebook)
	ids  []int // ids[g-1]: the publication accepted at generation g
	vers []int // vers[g-1]: the generation its accepted version was built on
	// declined maps a publication to the version a write left out because
	// it did not merge cleanly; its proposer rebuilds. (The real field is
	// bounded to the window; the model keeps it whole.)
	declined map[int]int
	writes   int // conditional writes of `current` accepted so far
	// sent is the write's `time` field: its writer's clock when it built
	// it. Waiters time their reads from it; nothing else depends on it.
	sent time.Duration
	pack int // the group pack the write names (0: none; its member's proposal is its pack)
	// checked: a v4 write, whose generations name registered proposals
	// (the audit checks they are stored).
	checked bool
}

// acceptedAt returns the generation that accepted id, looking back at most
// window generations (0: the whole history), or 0.
func (c *cur) acceptedAt(id, window int) int {
	lo := 0
	if window > 0 && c.gen > window {
		lo = c.gen - window
	}
	for g := c.gen; g > lo; g-- {
		if c.ids[g-1] == id {
			return g
		}
	}
	return 0
}

// store is the modelled bucket: `current`, the registered proposals and
// the content-keyed packs (only their count matters). Every method is one
// request applied atomically at the instant the engine chooses.
type store struct {
	cur      *cur
	etagSeq  int
	props    map[pkey]bool
	objects  map[string]bool       // today's keyed objects: markers, member packs
	everSeen map[int][]int         // id -> every generation that accepted it (audit)
	born     map[int]time.Duration // id -> the instant its UUIDv7 carries
	marks    map[pkey]mark
	chain    map[pkey]pkey   // a chained version -> its predecessor's version
	landed   []time.Duration // the instant each accepted write of `current` landed
	genWrite []int           // genWrite[g-1]: the accepted write that named generation g
	packs    map[int]bool    // group packs stored
	packSeq  int
	// broken records a write that named what the store lacks: the
	// invariant "pack before current" failed.
	broken string
}

func newStore() *store {
	return &store{
		cur:      &cur{declined: map[int]int{}},
		props:    map[pkey]bool{},
		objects:  map[string]bool{},
		everSeen: map[int][]int{},
		born:     map[int]time.Duration{},
		marks:    map[pkey]mark{},
		chain:    map[pkey]pkey{},
		packs:    map[int]bool{},
	}
}

// list returns the registered proposals built on a generation above
// after, in key order: LIST proposals/ with start-after.
func (s *store) list(after int) []pkey {
	var out []pkey
	for k := range s.props {
		if k.G > after {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

// mark is a fold marker: proposals/<G>-<id>.fold.<cut>, PUT by a folder
// once it has listed, so that writers who register after it know they
// are not in its group. Only waiting is timed by it.
type mark struct {
	cut pkey          // the last proposal the fold took
	at  time.Duration // when it was written
}

// listing is a LIST reply: the proposals and the fold markers (by the
// folder's publication ID).
type listing struct {
	keys  []pkey
	marks map[int]mark
}

func (s *store) listAll(after int) listing {
	l := listing{keys: s.list(after), marks: map[int]mark{}}
	// A folder that rebuilt its version has a marker per version: the
	// newest (largest G) is the one in flight. Chosen by key, not by the
	// map's order, so a run replays from its seed.
	newest := map[int]int{}
	for k, m := range s.marks {
		if g, ok := newest[k.ID]; k.G > after && (!ok || k.G > g) {
			newest[k.ID] = k.G
			l.marks[k.ID] = m
		}
	}
	return l
}

// replace is the conditional write of `current` on etag: it applies next
// (built by the writer on the value it read) when the stored ETag is still
// etag, and reports whether it did.
func (s *store) replace(etag int, next *cur) bool {
	if s.cur.etag != etag {
		return false
	}
	if next.pack != 0 && !s.packs[next.pack] && s.broken == "" {
		s.broken = fmt.Sprintf("generation %d names group pack %d, not stored", next.gen, next.pack)
	}
	for g := s.cur.gen + 1; next.checked && g <= next.gen; g++ {
		if k := (pkey{G: next.vers[g-1], ID: next.ids[g-1]}); !s.props[k] && s.broken == "" {
			s.broken = fmt.Sprintf("generation %d names proposal %v, not stored", g, k)
		}
	}
	s.etagSeq++
	n := *next
	n.etag = s.etagSeq
	n.writes = s.cur.writes + 1
	for g := s.cur.gen + 1; g <= n.gen; g++ {
		id := n.ids[g-1]
		s.everSeen[id] = append(s.everSeen[id], g)
		s.genWrite = append(s.genWrite, n.writes)
	}
	s.cur = &n
	return true
}

// extend builds the value a write on c would store: c with members
// appended, one generation each, and the versions left out recorded.
func (c *cur) extend(members []pkey, declined []pkey) *cur {
	n := &cur{
		gen:  c.gen + len(members),
		ids:  slices.Clip(c.ids),
		vers: slices.Clip(c.vers),
	}
	for _, m := range members {
		n.ids = append(n.ids, m.ID)
		n.vers = append(n.vers, m.G)
	}
	n.declined = c.declined
	if len(declined) > 0 || len(members) > 0 {
		n.declined = make(map[int]int, len(c.declined)+len(declined))
		for k, v := range c.declined {
			n.declined[k] = v
		}
		for _, m := range members {
			delete(n.declined, m.ID)
		}
		for _, d := range declined {
			n.declined[d.ID] = d.G
		}
	}
	return n
}
