package remote_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// leakSim drives a version-4 notebook on the in-memory store the way a
// fleet leaves it, write by write with NextV4 and AddRegistered (the
// fold's own steps), and with the leftovers of everything that can go
// wrong on the way: folds whose conditional write lost after they
// uploaded their segments and group pack, rollup builders that stop
// between the pack and its registration, two builders of one block,
// registrations that arrive after their block was superseded, and a
// checkpoint stored but never registered. K and W are the protocol's
// window (a fold copies the registrations of its LIST: G > C − K).
type leakSim struct {
	t       *testing.T
	ctx     context.Context
	store   *memstore.Mem
	rng     *rand.Rand
	k, w    uint64
	packs   int
	m       *remote.ManifestV4
	incs    []remote.IncrementV4          // every accepted generation, oldest first
	seen    map[uint64]*remote.ManifestV4 // every `current` written, by generation
	ids     int
	late    []lateReg         // registrations a slow builder writes later
	ends    map[string]uint64 // rollup packs built: the generation their block ends at
	sweeps  int
	cleanup func(c uint64) // run after every write (a sweep, in the tests)
}

type lateReg struct {
	at   uint64
	key  string
	data []byte
}

func newLeakSim(t *testing.T, seed uint64) *leakSim {
	return &leakSim{t: t, ctx: context.Background(), store: memstore.New(), rng: rand.New(rand.NewPCG(seed, 38)),
		k: 4, w: 8, packs: 16, seen: map[uint64]*remote.ManifestV4{}, ends: map[string]uint64{}}
}

func (s *leakSim) put(key string, data []byte) {
	s.t.Helper()
	if err := s.store.Put(s.ctx, key, data); err != nil {
		s.t.Fatal(err)
	}
}

func (s *leakSim) id() string { s.ids++; return retainID(s.ids) }

// version returns a member built on generation on (its proposal
// object stored) and its head commit, re-parented onto parent.
func (s *leakSim) version(on uint64, parent cas.ID) (remote.MemberV4, cas.Object) {
	id := s.id()
	c := cas.EncodeCommit(cas.Commit{Tree: cas.Sum([]byte("tree " + id)), Parent: parent, Publication: id, Time: time.UnixMilli(int64(1000 + s.ids))})
	s.put(remote.ProposalKey(on, id), []byte("proposal "+id))
	return remote.MemberV4{Publication: id, Proposal: on, Head: c.ID, Time: uint64(1000 + s.ids)}, c
}

func packOf(t *testing.T, objs ...cas.Object) []byte {
	t.Helper()
	w := cas.NewPackWriter()
	for _, o := range objs {
		if err := w.Put(o); err != nil {
			t.Fatal(err)
		}
	}
	data, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (s *leakSim) headAt(g uint64) cas.ID {
	if g == 0 {
		return cas.ID{}
	}
	return s.incs[g-1].Head
}

// members builds n versions on the current state, chained as a fold
// re-parents them, and their group pack when the write needs one.
func (s *leakSim) members(n int) ([]remote.MemberV4, remote.GroupRef, []byte) {
	var c uint64
	if s.m != nil {
		c = s.m.Generation
	}
	var mbs []remote.MemberV4
	var commits []cas.Object
	parent := s.headAt(c)
	for i := 0; i < n; i++ {
		on := c
		if i > 0 || s.rng.IntN(3) == 0 {
			on = c - min(c, uint64(s.rng.IntN(int(s.k)))) // built on an older state: re-parented
		}
		mb, commit := s.version(on, parent)
		mbs = append(mbs, mb)
		commits = append(commits, commit)
		parent = commit.ID
	}
	if n == 1 && mbs[0].Proposal == c {
		return mbs, remote.GroupRef{}, nil
	}
	data := packOf(s.t, commits...)
	return mbs, remote.GroupRef{Sum: cas.Sum(data), Size: int64(len(data))}, data
}

// registrations returns what a fold on the current state LISTs and
// takes: the registrations of its window it wants.
func (s *leakSim) registrations() []remote.Registered {
	var c uint64
	if s.m != nil {
		c = s.m.Generation
	}
	objs, err := s.store.List(s.ctx, remote.ProposalsPrefix)
	if err != nil {
		s.t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		kind, g, _, _, _ := remote.ParseProposalEntry(o.Key)
		if (kind == remote.EntryRollup || kind == remote.EntryCheckpoint) && g+s.k > c {
			keys = append(keys, o.Key)
		}
	}
	var out []remote.Registered
	for _, key := range s.m.WantsRegistered(keys) {
		data, _, err := s.store.Get(s.ctx, key)
		if err != nil {
			continue
		}
		if r, err := remote.DecodeRegistered(key, data); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// write lands one write of n members; lost first, a fold on the same
// state whose conditional write lost after its uploads.
func (s *leakSim) write(n int, lost bool) {
	s.t.Helper()
	if lost {
		// A fold of many members folds them into segments of its own.
		mbs, group, data := s.members([]int{2, 12}[s.rng.IntN(2)])
		_, ups, err := remote.NextV4(s.m, "0123456789abcdef0123456789abcdef", 1, mbs, group, nil)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, u := range ups {
			s.put(u.Key, u.Data)
		}
		if data != nil {
			s.put(group.Key(), data)
		}
	}
	mbs, group, data := s.members(n)
	next, ups, err := remote.NextV4(s.m, "0123456789abcdef0123456789abcdef", 1, mbs, group, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if s.m != nil {
		next.AddRegistered(s.registrations(), func(g uint64) (cas.ID, bool) { return s.headAt(g), g >= 1 && g <= uint64(len(s.incs)) })
	}
	for _, u := range ups {
		s.put(u.Key, u.Data)
	}
	if data != nil {
		s.put(group.Key(), data)
	}
	enc, err := remote.EncodeManifestV4(next)
	if err != nil {
		s.t.Fatal(err)
	}
	s.put(remote.CurrentKey, enc)
	s.m = next
	s.incs = append(s.incs, next.Increments[len(next.Increments)-n:]...)
	cp, _, err := remote.DecodeCurrent(enc)
	if err != nil {
		s.t.Fatal(err)
	}
	s.seen[next.Generation] = cp
	for _, g := range s.generations(next.Generation-uint64(n)+1, next.Generation) {
		s.build(g)
	}
	for i := 0; i < len(s.late); i++ {
		if l := s.late[i]; l.at <= next.Generation {
			s.put(l.key, l.data)
			s.late = slices.Delete(s.late, i, i+1)
			i--
		}
	}
	if s.cleanup != nil {
		s.cleanup(next.Generation)
	}
}

func (s *leakSim) generations(from, to uint64) []uint64 {
	var out []uint64
	for g := from; g <= to; g++ {
		out = append(out, g)
	}
	return out
}

// build is the background work of the member accepted at g: its
// rollups and its checkpoint, each pack stored and then registered,
// with the builder's failures drawn at random.
func (s *leakSim) build(g uint64) {
	m := s.m
	for _, l := range remote.RollupLevelsBuiltV4(m.Checkpoint.Through, g, s.packs) {
		first := g - 1<<l + 1
		var objs []cas.Object
		for h := first; h <= g; h++ {
			objs = append(objs, cas.EncodeCommit(cas.Commit{Tree: cas.Sum([]byte("tree " + s.incs[h-1].Publication)),
				Parent: s.headAt(h - 1), Publication: s.incs[h-1].Publication, Time: time.UnixMilli(int64(s.incs[h-1].Time))}))
		}
		builders := 1
		if s.rng.IntN(4) == 0 {
			builders = 2 // two builders of one block write different bytes
		}
		for b := 0; b < builders; b++ {
			if b > 0 {
				objs = append(objs, cas.EncodeCommit(cas.Commit{Tree: cas.Sum([]byte("tree")), Parent: s.headAt(g), Publication: s.incs[g-1].Publication}))
			}
			data := packOf(s.t, objs...)
			ref := remote.RollupRef{Level: l, First: first, Sum: cas.Sum(data), Size: int64(len(data))}
			key, desc, err := remote.EncodeRegistered(remote.Registered{Kind: remote.EntryRollup, Rollup: ref})
			if err != nil {
				s.t.Fatal(err)
			}
			s.put(ref.Key(), data)
			s.ends[ref.Key()] = g
			switch s.rng.IntN(5) {
			case 0: // stopped before its registration
			case 1: // registered late: its block may be superseded by then
				s.late = append(s.late, lateReg{at: g + 1 + uint64(s.rng.IntN(12)), key: key, data: desc})
			default:
				s.put(key, desc)
			}
		}
	}
	if remote.CheckpointDueV4(m, g, s.packs) {
		pub := s.id()
		data := packOf(s.t, cas.EncodeCommit(cas.Commit{Tree: cas.Sum([]byte("checkpoint " + pub)), Publication: pub}))
		cp := remote.Checkpoint{Pack: remote.PackRef{Key: remote.CheckpointKey(g, pub), Sum: cas.Sum(data), Size: int64(len(data))},
			Head: s.headAt(g), Through: g, Publication: pub}
		key, desc, err := remote.EncodeRegistered(remote.Registered{Kind: remote.EntryCheckpoint, Checkpoint: cp})
		if err != nil {
			s.t.Fatal(err)
		}
		s.put(cp.Pack.Key, data)
		if s.rng.IntN(4) > 0 {
			s.put(key, desc)
		}
	}
}

// run lands writes up to generation to: one or two members each, and
// a lost fold before one write in five.
func (s *leakSim) run(to uint64) {
	for s.m == nil || s.m.Generation < to {
		n := 1
		if s.m != nil && s.rng.IntN(3) == 0 {
			n = 2
		}
		s.write(n, s.m != nil && s.rng.IntN(5) == 0)
	}
}

func (s *leakSim) sweep() remote.CleanupResult {
	s.t.Helper()
	n := remote.Open(s.store, remote.Options{})
	res, err := n.CleanupV4(s.ctx, remote.CleanupV4Options{Window: s.w})
	if err != nil {
		s.t.Fatal(err)
	}
	s.sweeps++
	return res
}

// reachable returns the keys the store must keep for the `current` it
// holds, by the rules a reader and a fold rely on, worked out from the
// simulation's own record: `current`, the segments it reaches, the
// proposals and group packs of the generations above the history
// floor, the listed checkpoints and rollups, and what the window still
// keeps undecided (versions and registrations a fold may still take,
// with the packs they name, and checkpoints above the active one).
func (s *leakSim) reachable() map[string]string {
	s.t.Helper()
	m := s.m
	c, a := m.Generation, m.Checkpoint.Through
	out := map[string]string{remote.CurrentKey: "current"}
	var walk func(refs []remote.SegmentRef)
	walk = func(refs []remote.SegmentRef) {
		for _, ref := range refs {
			data, _, err := s.store.Get(s.ctx, ref.Key())
			if err != nil {
				continue // below the floor, swept
			}
			out[ref.Key()] = "listed segment"
			seg, err := remote.DecodeSegmentV4(ref, data)
			if err != nil {
				s.t.Fatal(err)
			}
			walk(seg.Segments)
		}
	}
	walk(m.Segments)
	floor := remote.HistoryFloorV4(m, s.w)
	for _, inc := range s.incs {
		if inc.Generation > floor {
			out[inc.ProposalKey()] = "accepted proposal"
			if inc.Group != (remote.GroupRef{}) {
				out[inc.Group.Key()] = "named group pack"
			}
		}
	}
	out[m.Checkpoint.Pack.Key] = "listed checkpoint"
	for _, cp := range m.Checkpoints {
		out[cp.Pack.Key] = "listed checkpoint"
	}
	for _, r := range m.Rollups {
		out[r.Key()] = "listed rollup"
	}
	settled := remote.SettledCheckpointV4(m, s.w)
	for key, end := range s.ends {
		if end > settled {
			out[key] = "rollup a `current` of the window may list"
		}
	}
	objs, err := s.store.List(s.ctx, "")
	if err != nil {
		s.t.Fatal(err)
	}
	live := map[string]bool{}
	for _, o := range objs {
		kind, g, id, _, _ := remote.ParseProposalEntry(o.Key)
		switch {
		case kind == remote.EntryProposal && g+s.w > c:
			live[id] = true
			out[o.Key] = "undecided proposal"
		case kind == remote.EntryMarker && g+s.w > c:
			out[o.Key] = "undecided marker"
		case (kind == remote.EntryRollup || kind == remote.EntryCheckpoint) && g > a:
			out[o.Key] = "registration a fold may take"
			data, _, _ := s.store.Get(s.ctx, o.Key)
			if r, err := remote.DecodeRegistered(o.Key, data); err == nil && kind == remote.EntryRollup {
				out[r.Rollup.Key()] = "registered rollup a fold may take"
			}
		}
		if isCP, through, _, err := remote.ParsePackKey(o.Key); err == nil && isCP && through > a {
			out[o.Key] = "checkpoint a fold may take"
		}
	}
	for _, o := range objs {
		if !strings.HasPrefix(o.Key, remote.GroupsPrefix) || out[o.Key] != "" {
			continue
		}
		data, _, _ := s.store.Get(s.ctx, o.Key)
		p, err := cas.OpenPack(data)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, id := range p.IDs() {
			obj, _ := p.Get(id)
			if cm, err := cas.DecodeCommit(obj); err == nil && live[cm.Publication] {
				out[o.Key] = "group pack of an undecided fold"
			}
		}
	}
	return out
}

// leftover lists what the store holds beyond reachable, by kind, with
// the bytes of each kind.
func (s *leakSim) leftover() (map[string][]string, map[string]int64) {
	keep := s.reachable()
	objs, err := s.store.List(s.ctx, "")
	if err != nil {
		s.t.Fatal(err)
	}
	keys, bytes := map[string][]string{}, map[string]int64{}
	for _, o := range objs {
		if keep[o.Key] != "" {
			continue
		}
		kind := leakKind(o.Key)
		keys[kind] = append(keys[kind], o.Key)
		bytes[kind] += o.Size
	}
	return keys, bytes
}

func leakKind(key string) string {
	switch kind, _, _, _, _ := remote.ParseProposalEntry(key); {
	case kind == remote.EntryProposal:
		return "proposal"
	case kind == remote.EntryMarker:
		return "fold marker"
	case kind == remote.EntryRollup:
		return "rollup registration"
	case kind == remote.EntryCheckpoint:
		return "checkpoint registration"
	}
	for _, p := range []string{remote.SegmentsPrefix, remote.GroupsPrefix, remote.RollupsPrefix, remote.CheckpointsPrefix} {
		if strings.HasPrefix(key, p) {
			return p
		}
	}
	return "other"
}

func leakReport(keys map[string][]string, bytes map[string]int64) string {
	var kinds []string
	for k := range keys {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&b, "\n  %s: %d objects, %d bytes (e.g. %s)", k, len(keys[k]), bytes[k], keys[k][0])
	}
	return b.String()
}

// A version-4 store driven through every way a fleet leaves objects
// behind (leakSim), swept every 4 generations past every window, ends
// with nothing that `current` and its retained history do not reach,
// beyond what the window still keeps undecided.
func TestCleanupV4LeavesNothingUnreachable(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := newLeakSim(t, seed)
			s.cleanup = func(c uint64) {
				if c%4 == 0 {
					s.sweep()
				}
			}
			s.run(300)
			s.cleanup = nil
			// Quiet writes of one member each, past every window, so
			// that everything the busy part left is decided.
			for i := 0; i < 3*int(s.w)+s.packs; i++ {
				s.write(1, false)
			}
			s.sweep()
			s.sweep()
			if keys, bytes := s.leftover(); len(keys) > 0 {
				t.Fatalf("after %d sweeps at generation %d (active checkpoint %d), the store still holds what nothing reaches:%s",
					s.sweeps, s.m.Generation, s.m.Checkpoint.Through, leakReport(keys, bytes))
			}
		})
	}
}

// planned lists the objects a reader that read m and holds the closure
// of generation reach GETs to catch up (PlanCatchUpV4): the active
// checkpoint's pack when it is behind it, each rollup the plan takes,
// the proposal and group pack of each generation it takes alone, and
// the segments that index those generations.
func (s *leakSim) planned(m *remote.ManifestV4, reach uint64) []string {
	s.t.Helper()
	var out []string
	if reach < m.Checkpoint.Through {
		out = append(out, m.Checkpoint.Pack.Key)
		reach = m.Checkpoint.Through
	}
	var alone []uint64
	for _, cv := range remote.PlanCatchUpV4(m, reach) {
		if cv.Rollup != nil {
			out = append(out, cv.Rollup.Key())
			continue
		}
		for g := cv.First; g <= cv.Last; g++ {
			inc := s.incs[g-1]
			out = append(out, inc.ProposalKey())
			if inc.Group != (remote.GroupRef{}) {
				out = append(out, inc.Group.Key())
			}
			alone = append(alone, g)
		}
	}
	var walk func(refs []remote.SegmentRef)
	walk = func(refs []remote.SegmentRef) {
		for _, ref := range refs {
			if !slices.ContainsFunc(alone, func(g uint64) bool { return ref.First <= g && g <= ref.Last }) {
				continue
			}
			out = append(out, ref.Key())
			data, _, err := s.store.Get(s.ctx, ref.Key())
			if err != nil {
				continue // reported by the caller
			}
			seg, err := remote.DecodeSegmentV4(ref, data)
			if err != nil {
				s.t.Fatal(err)
			}
			walk(seg.Segments)
		}
	}
	walk(m.Segments)
	return out
}

// A reader that planned its catch-up from any `current` of the window
// (generation c − W + 1 or later) still finds every object its plan
// names after a sweep at c, from every position it may hold: the sweep
// deletes nothing a `current` within the window listed. Sweeps run
// after every write of the simulation (leakSim), so checkpoints become
// active, rollups are dropped and history falls below the floor between
// a reader's read and the sweep.
func TestCleanupV4KeepsWhatReadersOfTheWindowPlanned(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := newLeakSim(t, seed)
			s.cleanup = func(c uint64) {
				s.sweep()
				// The history at or below the floor is the retention
				// rule's: a reader of the window whose active checkpoint
				// lies below the oldest listed one may need it, and gets
				// MISSING_PACK, reads `current` again and starts from
				// that checkpoint (docs/storage.md §5.1 R5).
				floor := remote.HistoryFloorV4(s.m, s.w)
				below := map[string]bool{}
				for _, inc := range s.incs[:floor] {
					below[inc.ProposalKey()] = true
					if inc.Group != (remote.GroupRef{}) && s.incs[floor].Group != inc.Group {
						below[inc.Group.Key()] = true
					}
				}
				for _, m := range s.seen {
					if m.Checkpoint.Through < floor {
						below[m.Checkpoint.Pack.Key] = true
					}
				}
				for g, m := range s.seen {
					if g+s.w <= c {
						delete(s.seen, g) // out of the window
						continue
					}
					// From the empty notebook, and from every generation
					// from just below its active checkpoint on (one far
					// behind starts from that checkpoint).
					for reach := uint64(0); reach < m.Generation; reach = max(reach+1, m.Checkpoint.Through-min(m.Checkpoint.Through, 1)) {
						for _, key := range s.planned(m, reach) {
							if _, _, last, _, err := remote.ParseSegmentKey(key); below[key] || err == nil && last <= floor {
								continue
							}
							if _, err := s.store.Head(s.ctx, key); err != nil {
								t.Fatalf("at %d, a reader of generation %d holding %d (active checkpoint %d, now %d): %s: %v",
									c, g, reach, m.Checkpoint.Through, s.m.Checkpoint.Through, key, err)
							}
						}
					}
				}
			}
			s.run(200)
		})
	}
}
