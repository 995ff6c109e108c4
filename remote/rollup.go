package remote

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
)

// Rollups (docs/storage.md §3A.6). The rollup of level L and block j
// covers the generations (j*2^L, (j+1)*2^L]: it holds every object
// reachable from the head accepted at the block's end that is not
// reachable from the head accepted at its start (found by walking the two
// trees side by side, descending only where they differ), so a reader that
// holds the closure of the head at its start holds the closure of the head
// at its end once it has the rollup. Its key is derived from the block
// (RollupKey), so a reader needs no descriptor: it asks for the key, and a
// rollup nobody built yet (a 404) is replaced by smaller blocks, down to
// the increments (coverItem.instead). Rollups are written by whoever
// accepted the generation that ends the block, in the background; two
// builders of one block write equivalent packs under one key, so losing
// that race is harmless. Levels MinRollupLevel..MaxRollupLevel exist;
// above them, checkpoints.
//
// What is stored once: the blocks of one level do not overlap, so an
// object is in at most one rollup of a level (unless the history removed
// it and added it back). A block that starts at generation 1 (j = 0), a
// *first block*, has no head at its start: its rollup is the whole
// notebook at its end, what a checkpoint would hold, and one first block
// per level held the notebook's first state again at every level (a 1 MiB
// note stored seven times over 200 appends). Only the newest first block
// is kept: the builder of (0, 2^L] deletes (0, 2^(L-1)] once its own is
// written (FirstBlockLevel names the one a reader may ask for). It is what
// a cold reader of a notebook younger than its first checkpoint fetches,
// the whole notebook in one GET, and a reader far behind in a young
// notebook too (a superset is harmless). A reader that asks for a first
// block deleted since it read `current` gets a 404 and smaller blocks
// (coverItem.instead never names a first block), as for any rollup nobody
// built; so does an older build's reader, which asks for any of them.

// Rollup levels: blocks of 4 .. 1,024 generations.
const (
	MinRollupLevel = 2
	MaxRollupLevel = 10
	RollupsPrefix  = "packs/rollups/"
)

// RollupKey is packs/rollups/<first generation, 20 digits>-<level, 2
// digits>.pack for the block of level whose first generation is first.
func RollupKey(level int, first uint64) string {
	return fmt.Sprintf("%s%020d-%02d%s", RollupsPrefix, first, level, packSuffix)
}

// ParseRollupKey returns the level and last generation a rollup key names.
func ParseRollupKey(key string) (level int, last uint64, err error) {
	rest, ok := strings.CutPrefix(key, RollupsPrefix)
	rest, ok2 := strings.CutSuffix(rest, packSuffix)
	digits, lv, ok3 := strings.Cut(rest, "-")
	bad := fmt.Errorf("%w: %q is not a rollup key", ErrInvalidKey, key)
	if !ok || !ok2 || !ok3 || len(digits) != 20 || len(lv) != 2 {
		return 0, 0, bad
	}
	first, err1 := strconv.ParseUint(digits, 10, 64)
	l, err2 := strconv.Atoi(lv)
	if err1 != nil || err2 != nil || l < MinRollupLevel || l > MaxRollupLevel || first == 0 || (first-1)%(1<<l) != 0 {
		return 0, 0, bad
	}
	return l, first + 1<<l - 1, nil
}

// RollupsEndingAt lists the levels whose blocks end at generation g.
func RollupsEndingAt(g uint64) []int {
	var out []int
	for l := MinRollupLevel; l <= MaxRollupLevel && g >= 1<<l && g%(1<<l) == 0; l++ {
		out = append(out, l)
	}
	return out
}

// FirstBlockLevel is the level of the first block (the block that starts
// at generation 1) that is kept once generation g is accepted: the largest
// level whose first block ends by g (0: none, g < 2^MinRollupLevel). Its
// builder deleted the first blocks below it (see the rollup notes above).
func FirstBlockLevel(g uint64) int {
	l := 0
	for c := MinRollupLevel; c <= MaxRollupLevel && g >= 1<<c; c++ {
		l = c
	}
	return l
}

// RollupsDue reports whether BuildRollups has work after the publication
// of m's newest increment: a block ends at its generation, or at one of
// the checkpoint swaps between it and the previous increment (nobody else
// builds those). A reader's plan asks for both kinds.
func (m *Manifest) RollupsDue() bool {
	if m == nil || m.Version < 2 || len(m.Increments) == 0 {
		return false
	}
	n := len(m.Increments)
	g := m.Increments[n-1].Generation
	prev := uint64(0)
	if n > 1 {
		prev = m.Increments[n-2].Generation
	} else if len(m.Segments) > 0 {
		prev = m.Segments[len(m.Segments)-1].Last
	}
	for e := max(prev+1, m.Checkpoint.Through+1); e <= g; e++ {
		if len(RollupsEndingAt(e)) > 0 {
			return true
		}
	}
	return false
}

// BuiltRollup is one rollup a builder uploaded.
type BuiltRollup struct {
	Key  string
	Data []byte
}

// BuildRollups writes the rollups of the blocks that end at generation g
// of state (g must be accepted: at most state's generation) and are not
// yet below the active checkpoint. src must read the closure of the head
// at g (a synchronised cache does); objects of older heads it lacks only
// make a rollup larger. It returns what it uploaded.
func (n *Notebook) BuildRollups(ctx context.Context, state State, g uint64, src cas.Source) ([]BuiltRollup, error) {
	m := state.Manifest
	if m == nil || m.Version < 2 || g > m.Generation || g <= m.Checkpoint.Through {
		return nil, nil
	}
	end, ok, err := n.HeadAt(ctx, state, g)
	if err != nil || !ok {
		return nil, err
	}
	// The blocks ending at g, and at the generations since the previous
	// increment (checkpoint swaps: nobody else ends their blocks).
	prev := g - 1
	if inc, ok, err := n.HeadAt(ctx, state, g-1); err == nil && ok {
		prev = inc.Generation
	}
	type block struct {
		level int
		end   uint64
	}
	var blocks []block
	for e := max(prev+1, m.Checkpoint.Through+1); e <= g; e++ {
		for _, l := range RollupsEndingAt(e) {
			blocks = append(blocks, block{l, e})
		}
	}
	var out []BuiltRollup
	for _, bl := range blocks {
		l := bl.level
		start := bl.end - 1<<l
		var from cas.ID // zero for a first block: everything its end reaches
		if start > 0 {
			inc, ok, err := n.HeadAt(ctx, state, start)
			if err != nil {
				return out, err
			}
			if !ok {
				continue // the block starts before the retained history
			}
			from = inc.Head
		}
		to := end.Head
		if bl.end < g {
			at, ok, err := n.HeadAt(ctx, state, bl.end)
			if err != nil || !ok {
				continue
			}
			to = at.Head
		}
		data, err := buildRollup(src, from, to, nil)
		if err != nil {
			return out, fmt.Errorf("remote: rollup of generations %d..%d: %w", start+1, bl.end, err)
		}
		key := RollupKey(l, start+1)
		if err := n.store.Put(ctx, key, data); err != nil {
			return out, fmt.Errorf("remote: upload rollup: %w", err)
		}
		out = append(out, BuiltRollup{Key: key, Data: data})
		if start == 0 && l > MinRollupLevel {
			// The previous first block holds the same first state: only
			// the newest is kept. A failed delete leaves one more copy,
			// which cleanup removes once a checkpoint passes it, so it
			// does not fail the build.
			if err := n.store.Delete(ctx, RollupKey(l-1, 1)); err != nil && ctx.Err() != nil {
				return out, ctx.Err()
			}
		}
	}
	return out, nil
}

// buildRollup packs the objects reachable from commit to and not from
// commit from (zero: everything reachable from to), by a side-by-side walk
// that descends only where the trees differ. An object of from's side the
// source lacks counts as absent (the rollup then holds more than needed).
// depths, when set (format v4), makes each tree that replaces a tree at
// the same path a delta of it (pack version 2): depths is the builder's
// store, which says how deep each base is (docs/format.md §4.8); a base
// it lacks keeps the tree whole.
func buildRollup(src cas.Source, from, to cas.ID, depths cas.Source) ([]byte, error) {
	w := cas.NewPackWriter()
	o, err := src.Get(to)
	if err != nil {
		return nil, err
	}
	c, err := cas.DecodeCommit(o)
	if err != nil {
		return nil, err
	}
	if err := w.Put(o); err != nil {
		return nil, err
	}
	var oldTree cas.ID
	if !from.IsZero() {
		if fc, err := cas.ReadCommit(src, from); err == nil {
			oldTree = fc.Tree
		}
	}
	if err := rollupWalk(src, w, c.Tree, oldTree, depths); err != nil {
		return nil, err
	}
	return w.Finish()
}

func rollupWalk(src cas.Source, w *cas.PackWriter, id, old cas.ID, depths cas.Source) error {
	if id == old || w.Has(id) {
		return nil
	}
	o, err := src.Get(id)
	if err != nil {
		return err
	}
	var oldObj cas.Object
	haveOld := false
	if !old.IsZero() {
		if oo, err := src.Get(old); err == nil && oo.Kind == o.Kind {
			oldObj, haveOld = oo, true
		}
	}
	depth := -1 // the base's depth in the builder's store; -1: whole
	if depths != nil && haveOld && o.Kind == cas.KindTree {
		if _, d, derr := cas.GetDepth(depths, old); derr == nil {
			depth = d
		}
	}
	if depth >= 0 {
		err = w.PutDelta(o, oldObj, depth)
	} else {
		err = w.Put(o)
	}
	if err != nil {
		return err
	}
	switch o.Kind {
	case cas.KindTree:
		entries, err := cas.DecodeTree(o)
		if err != nil {
			return err
		}
		prev := map[string]cas.TreeEntry{}
		if haveOld {
			if olds, err := cas.DecodeTree(oldObj); err == nil {
				for _, e := range olds {
					prev[e.Name] = e
				}
			}
		}
		for _, e := range entries {
			var was cas.ID
			if p, ok := prev[e.Name]; ok && p.Kind == e.Kind {
				was = p.ID
			}
			if err := rollupWalk(src, w, e.ID, was, depths); err != nil {
				return err
			}
		}
	case cas.KindFile:
		f, err := cas.DecodeFile(o)
		if err != nil {
			return err
		}
		had := map[cas.ID]bool{}
		if haveOld {
			if of, err := cas.DecodeFile(oldObj); err == nil {
				for _, ch := range of.Chunks {
					had[ch.ID] = true
				}
			}
		}
		for _, ch := range f.Chunks {
			if had[ch.ID] || w.Has(ch.ID) {
				continue
			}
			co, err := src.Get(ch.ID)
			if err != nil {
				return err
			}
			if err := w.Put(co); err != nil {
				return err
			}
		}
	}
	return nil
}

// CaughtUpPack is one pack a catch-up downloaded: an increment (verified
// against its descriptor) or a rollup (verified by the pack's own index
// and object IDs when the caller opens it).
type CaughtUpPack struct {
	Key  string
	Data []byte
}

// CatchUpStats counts what a catch-up cost.
type CatchUpStats struct {
	Rollups, Increments, Missing int // rollups fetched, increments fetched, rollups not (yet) built
}

// coverItem is one step of a catch-up plan: a rollup block, or the
// increments of a generation range.
type coverItem struct {
	level       int // 0: increments
	first, last uint64
}

// planCatchUp returns the plan for a reader that holds the closure of the
// head at generation reach (and, before m.Upgraded, every increment pack
// of the chain up to reach) to reach m's head: the increments of the
// legacy part, then, as long as one fits, the rollup of the largest block
// that holds the next generation, ends by the head and is built (it may
// start before: a superset is harmless), and the increments after the
// last one. Of the blocks that start at generation 1 only the one of
// FirstBlockLevel(g) is kept, the largest that ends by g, so the plan is
// the one it would be with all of them: each block after the first is of
// a lower level than the one before, at most log2(k)+2 items for k
// generations when every rollup exists. When that first block is too fresh
// to ask for, a reader whose blocks would start at generation 1 climbs
// through smaller ones instead (the increments up to 2^MinRollupLevel
// first when below it): at most 2*log2(k)+3 items.
func planCatchUp(m *Manifest, reach uint64) []coverItem { return planCatchUpBefore(m, reach, 0) }

// planCatchUpBefore is planCatchUp asking for no rollup of a block that
// ends at or after generation fresh (0: none), whose builder is unlikely to
// have written it yet (freshFrom): those generations come as increments,
// which the tail lists.
func planCatchUpBefore(m *Manifest, reach, fresh uint64) []coverItem {
	if m == nil || reach >= m.Generation {
		return nil
	}
	if n := len(m.Increments); n > 0 && m.Increments[n-1].Generation <= reach {
		return nil // only checkpoint swaps since: the head is the one reached
	}
	// The head is that of the newest increment: checkpoint swaps after it
	// move no head, and a block ending at one of them is built only by the
	// next publication (BuildRollups), so the plan stops at the head's
	// generation instead of asking for a rollup nobody wrote yet.
	g := m.Generation
	if n := len(m.Increments); n > 0 && m.Version >= 2 {
		g = m.Increments[n-1].Generation
	}
	var out []coverItem
	pos := reach
	if m.Version >= 2 {
		pos = skipSwaps(m, reach)
	}
	if m.Version < 2 || pos+1 < m.Upgraded {
		stop := g
		if m.Version >= 2 {
			stop = min(g, m.Upgraded-1)
		}
		out = append(out, coverItem{level: 0, first: pos + 1, last: stop})
		pos = stop
	}
	limit := g
	if fresh > 0 {
		limit = min(g, fresh-1)
	}
	first := FirstBlockLevel(g) // the only first block kept
	for pos < g {
		// The largest block that holds pos+1 and ends by g: it may start
		// before pos (a superset is harmless, and one larger block is
		// fewer GETs than the aligned pieces of the rest of it).
		level, end := 0, uint64(0)
		for l := MaxRollupLevel; l >= MinRollupLevel; l-- {
			if e := pos - pos%(1<<l) + 1<<l; e <= limit && e > m.Checkpoint.Through && (e > 1<<l || l == first) {
				level, end = l, e
				break
			}
		}
		if b := uint64(1) << MinRollupLevel; level == 0 && pos < b && 2*b <= limit {
			// Every block holding pos+1 starts at generation 1 and the
			// kept one is too fresh: the increments up to the first
			// level-2 block that is not a first block.
			out = append(out, coverItem{level: 0, first: pos + 1, last: b})
			pos = b
			continue
		}
		if level == 0 {
			out = append(out, coverItem{level: 0, first: pos + 1, last: g})
			break
		}
		out = append(out, coverItem{level: level, first: end - 1<<level + 1, last: end})
		pos = end
	}
	return out
}

// freshRTTs is how many round trips of a GET of `current` a rollup takes
// to appear after the publication that ends its block: the publisher's
// conditional write returns (its Time is set before it), then it builds
// the rollup and PUTs it.
const freshRTTs = 4

// freshFrom returns the oldest generation of m's tail from which on every
// increment was published less than freshRTTs round trips ago (by this
// reader's clock against the publishers' recorded times; 0: none): a
// rollup of a block ending there is most likely not written yet, and
// asking for it costs a 404 and then its halves, each absent too (a
// builder writes a generation's levels one after the other). At 1,000
// commits a minute a generation is ~60 ms old when the next writer reads
// `current`. A clock behind the publishers' makes more of the tail look
// fresh (at most the tail's increments are then fetched one by one), one
// ahead makes none look fresh (the 404s of before).
func (n *Notebook) freshFrom(m *Manifest) uint64 {
	rtt := time.Duration(n.readRTT.Load())
	if m == nil || m.Version < 2 || rtt <= 0 {
		return 0
	}
	now := n.opts.Now().UnixMilli()
	age := (freshRTTs * rtt).Milliseconds()
	fresh := uint64(0)
	for i := len(m.Increments) - 1; i >= 0; i-- {
		inc := m.Increments[i]
		if inc.Time == 0 || now-int64(inc.Time) >= age {
			break
		}
		fresh = inc.Generation
	}
	return fresh
}

// skipSwaps returns the generation before the first increment after
// reach when the tail proves that the generations in between are only
// checkpoint swaps (an increment of the tail at or below reach: the tail
// lists every increment after it). Swaps move no head, so a reader at reach
// holds the state of that generation already, and a plan from there never
// fetches a rollup of a block that added nothing after reach.
func skipSwaps(m *Manifest, reach uint64) uint64 {
	for i, inc := range m.Increments {
		if inc.Generation > reach {
			if i > 0 {
				return max(reach, inc.Generation-1)
			}
			break
		}
	}
	return reach
}

// CatchUp downloads what a reader that reached generation reach (see
// planCatchUp) needs to read state's head, fetching up to limit packs
// at a time. A rollup nobody built is replaced by smaller blocks. Increments
// are verified against their descriptors; a missing increment wraps
// ErrMissingPack.
//
// have reports packs the caller holds already (by key): they are skipped.
func (n *Notebook) CatchUp(ctx context.Context, state State, reach uint64, limit int, have func(key string) bool, keep func([]CaughtUpPack) error) (CatchUpStats, error) {
	var st CatchUpStats
	if reach >= state.Generation() {
		return st, nil
	}
	plan := planCatchUpBefore(state.Manifest, reach, n.freshFrom(state.Manifest))
	for len(plan) > 0 {
		var incs []coverItem
		var rolls []coverItem
		for _, it := range plan {
			switch {
			case it.level == 0:
				incs = append(incs, it)
			case have == nil || !have(RollupKey(it.level, it.first)):
				rolls = append(rolls, it)
			}
		}
		var need []Increment
		for _, it := range incs {
			got, err := n.Publications(ctx, state, max(it.first, reach+1), it.last)
			if err != nil {
				return st, err
			}
			for _, inc := range got {
				if have == nil || !have(inc.Pack.Key) {
					need = append(need, inc)
				}
			}
		}
		refs := make([]PackRef, len(need))
		for i, inc := range need {
			refs[i] = inc.Pack
		}
		type result struct {
			item coverItem
			pack CaughtUpPack
			err  error
		}
		jobs := make([]func() result, 0, len(refs)+len(rolls))
		for _, ref := range refs {
			jobs = append(jobs, func() result {
				data, err := n.FetchPack(ctx, ref)
				return result{pack: CaughtUpPack{Key: ref.Key, Data: data}, err: err}
			})
		}
		for _, it := range rolls {
			jobs = append(jobs, func() result {
				key := RollupKey(it.level, it.first)
				data, _, err := n.store.Get(ctx, key)
				return result{item: it, pack: CaughtUpPack{Key: key, Data: data}, err: err}
			})
		}
		results := make([]result, len(jobs))
		// Every job runs (each records its own error) unless ctx ends.
		_ = parallel.For(len(jobs), limit, func(i int) error {
			if ctx.Err() == nil {
				results[i] = jobs[i]()
			}
			return nil
		})
		plan = nil
		var got []CaughtUpPack
		var first error
		for i, r := range results {
			rollup := i >= len(refs)
			switch {
			case r.err == nil:
				got = append(got, r.pack)
				if rollup {
					st.Rollups++
				} else {
					st.Increments++
				}
			case rollup && errors.Is(r.err, ErrNotFound):
				st.Missing++
				plan = append(plan, r.item.instead(reach)...)
			case first == nil:
				first = r.err
			}
		}
		if err := keep(got); err != nil && first == nil {
			first = err
		}
		if first != nil {
			return st, first
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
	}
	return st, nil
}

// instead replaces a rollup nobody built, skipping what the reader already
// reached. A builder writes the levels ending at one generation from the
// lowest up, so the larger half of an absent block, which ends where it
// does, is most likely absent too, and so on down: instead of descending
// one 404 per level, the part before the block's last four generations
// comes as the largest blocks that fit (built by other, earlier
// publications), the last four as the level-2 block (the first a builder
// writes), or as increments when that one is absent. It names no first
// block (one starting at generation 1): all but the newest are deleted,
// and an absent one is most often a first block deleted since the reader
// read `current`; below generation 2^MinRollupLevel the increments come
// instead.
func (it coverItem) instead(reach uint64) []coverItem {
	if it.level <= MinRollupLevel {
		return []coverItem{{level: 0, first: max(it.first, reach+1), last: it.last}}
	}
	const b = 1 << MinRollupLevel
	var out []coverItem
	pos := max(it.first-1, reach)
	for pos+b < it.last {
		if pos < b { // every block holding pos+1 is a first block
			out = append(out, coverItem{level: 0, first: pos + 1, last: b})
			pos = b
			continue
		}
		for l := it.level - 1; l >= MinRollupLevel; l-- {
			if e := pos - pos%(1<<l) + 1<<l; e <= it.last-b && e > 1<<l {
				out = append(out, coverItem{level: l, first: e - 1<<l + 1, last: e})
				pos = e
				break
			}
		}
	}
	return append(out, coverItem{level: MinRollupLevel, first: it.last - b + 1, last: it.last})
}
