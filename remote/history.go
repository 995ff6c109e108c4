package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
)

// History: the retained publications, read from `current` and the
// segments it indexes. This is the one entry point for everything that
// lists or looks up publications older than the tail (log, show, diff,
// restore, revert, the ambiguous-write resolution, verify).

// segmentCache keeps decoded segments: they are immutable, so a segment
// read once never needs a second GET in this process.
type segmentCache struct {
	mu   sync.Mutex
	segs map[string]*Segment
}

// maxCachedSegments bounds the cache (about 2.7 KiB each).
const maxCachedSegments = 4096

// ReadSegment returns the segment ref describes, from the process's cache
// or the store (size, BLAKE3 and every rule checked): its own object, or
// (carried) the chunk of its carrier's pack. A segment the store does not
// have wraps ErrMissingPack; a damaged one ErrCorruptPack.
func (n *Notebook) ReadSegment(ctx context.Context, ref SegmentRef) (*Segment, error) {
	key := ref.Key()
	ck := key + "#" + ref.Sum.String() // a carrier may hold several segments
	n.segments.mu.Lock()
	s := n.segments.segs[ck]
	n.segments.mu.Unlock()
	if s != nil {
		return s, nil
	}
	data, _, err := n.store.Get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("remote: segment %s named by current: %w: %w", key, ErrMissingPack, err)
	case err != nil:
		return nil, fmt.Errorf("remote: read segment %s: %w", key, err)
	}
	if s, err = decodeSegmentIn(ref, data); err != nil {
		return nil, err
	}
	n.segments.mu.Lock()
	if n.segments.segs == nil || len(n.segments.segs) >= maxCachedSegments {
		n.segments.segs = map[string]*Segment{}
	}
	n.segments.segs[ck] = s
	n.segments.mu.Unlock()
	return s, nil
}

// decodeSegmentIn decodes the segment ref describes from data: its own
// object, or its carrier's pack.
func decodeSegmentIn(ref SegmentRef, data []byte) (*Segment, error) {
	if !ref.Carried() && ManifestVersionOf(data) == ManifestV4Version {
		// A segment a version-4 write made (always an object of its own).
		s, err := DecodeSegmentV4(ref, data)
		if err != nil {
			return nil, err
		}
		return segmentOfV4(s), nil
	}
	if ref.Carried() {
		var err error
		if data, err = carriedSegment(ref, data); err != nil {
			return nil, fmt.Errorf("remote: segment %d..%d in %s: %w: %w", ref.First, ref.Last, ref.Key(), ErrCorruptPack, err)
		}
	}
	return DecodeSegment(ref, data)
}

// carriedSegment returns the bytes of the segment ref describes from its
// carrier's pack: the chunk object whose content they are. A carried
// descriptor's checksum is that chunk's object ID (BLAKE3 of the tag byte
// 0x01 and the segment's bytes, docs/format.md §2.1), which the pack
// checks when the object is read.
func carriedSegment(ref SegmentRef, packData []byte) ([]byte, error) {
	pack, err := cas.OpenPack(packData)
	if err != nil {
		return nil, err
	}
	o, err := pack.Get(ref.Sum)
	if err != nil {
		return nil, fmt.Errorf("the carrier lacks the segment: %w", err)
	}
	return cas.DecodeChunk(o)
}

// Publications returns every retained publication of state whose
// generation lies in [from, to], oldest first: generation, publication ID,
// parent, head, pack and (version 2) publication time. It reads the tail
// from `current` and only the segments that overlap the range (one GET
// per segment level for a short range). Generations without an increment
// (a checkpoint swap) and generations older than the retention window are
// simply absent. For a version-1 state it lists the increments of every
// chain.
func (n *Notebook) Publications(ctx context.Context, state State, from, to uint64) ([]Increment, error) {
	m := state.Manifest
	if m == nil || from > to {
		return nil, nil
	}
	// Room for the whole range up to a bound (the range comes from the
	// caller, not from the store, and may be far wider than what is
	// listed): a listing of the whole retained history otherwise grows its
	// slice of 200-byte increments a dozen times.
	out := make([]Increment, 0, min(to-from+1, maxListedPrealloc))
	keep := func(incs []Increment) {
		if n := len(incs); n > 0 && incs[0].Generation >= from && incs[n-1].Generation <= to {
			out = append(out, incs...) // a segment inside the range, in order
			return
		}
		for _, inc := range incs {
			if inc.Generation >= from && inc.Generation <= to {
				out = append(out, inc)
			}
		}
	}
	if m.Version < 2 {
		for i := len(m.Retained) - 1; i >= 0; i-- {
			keep(m.Retained[i].Increments)
		}
		keep(m.Increments)
		return out, nil
	}
	var walk func(refs []SegmentRef) error
	walk = func(refs []SegmentRef) error {
		var in []SegmentRef
		for _, ref := range refs {
			if ref.Last >= from && ref.First <= to {
				in = append(in, ref)
			}
		}
		segs, err := n.readSegments(ctx, in)
		for _, s := range segs {
			if s.Level == 1 {
				keep(s.Increments)
			} else if err := walk(s.Segments); err != nil {
				return err
			}
		}
		return err
	}
	if len(m.Increments) == 0 || from < m.Increments[0].Generation {
		if err := walk(m.Segments); err != nil {
			return out, err
		}
	}
	keep(m.Increments)
	return out, nil
}

// segmentReaders is how many segments of one level readSegments reads at
// once.
const segmentReaders = 4

// readSegments reads refs (ReadSegment), up to segmentReaders at a time:
// a listing of the whole history reads over a thousand segments, one GET,
// checksum and decode each, which otherwise run one after the other on
// one core (and, on S3, one round trip after the other). It returns the
// segments in order up to the first that failed, and that failure.
func (n *Notebook) readSegments(ctx context.Context, refs []SegmentRef) ([]*Segment, error) {
	out := make([]*Segment, len(refs))
	errs := make([]error, len(refs))
	if len(refs) == 1 {
		out[0], errs[0] = n.ReadSegment(ctx, refs[0])
	} else if len(refs) > 1 {
		// After a failure no further read starts: the rest are not needed.
		_ = parallel.For(len(refs), segmentReaders, func(i int) error {
			out[i], errs[i] = n.ReadSegment(ctx, refs[i])
			return errs[i]
		})
	}
	for i, err := range errs {
		if err != nil || out[i] == nil {
			return out[:i], err
		}
	}
	return out, nil
}

// maxListedPrealloc bounds the increments Publications makes room for
// before it reads any (16,384 of about 200 bytes: 3.3 MB).
const maxListedPrealloc = 1 << 14

// Oldest returns the lowest generation state's history still lists (the
// first increment of the oldest segment, or of the tail); 0 for the empty
// notebook.
func (m *Manifest) Oldest() uint64 {
	switch {
	case m == nil:
		return 0
	case m.Version < 2:
		for i := len(m.Retained) - 1; i >= 0; i-- {
			if len(m.Retained[i].Increments) > 0 {
				return m.Retained[i].Increments[0].Generation
			}
		}
	case len(m.Segments) > 0:
		return m.Segments[0].First
	}
	if len(m.Increments) > 0 {
		return m.Increments[0].Generation
	}
	return 0
}

// publicationAt returns the increment of generation g, if still retained.
func (n *Notebook) publicationAt(ctx context.Context, state State, g uint64) (Increment, bool, error) {
	incs, err := n.Publications(ctx, state, g, g)
	if err != nil || len(incs) == 0 {
		return Increment{}, false, err
	}
	return incs[0], true, nil
}

// HeadAt returns the head accepted at generation g of state: the head of
// the newest retained increment at or below g (a checkpoint swap moves no
// head). False when g is older than the retained history.
func (n *Notebook) HeadAt(ctx context.Context, state State, g uint64) (Increment, bool, error) {
	if m := state.Manifest; m != nil && len(m.Increments) > 0 {
		tail := m.Increments
		if g >= m.Generation {
			return tail[len(tail)-1], true, nil
		}
		// From its first increment on, a version-2 tail lists every one:
		// no segment to read (a rollup builder asks for generations a few
		// blocks back, mostly still there).
		if m.Version >= 2 && g >= tail[0].Generation {
			i := sort.Search(len(tail), func(i int) bool { return tail[i].Generation > g })
			return tail[i-1], true, nil
		}
	}
	// The generation itself first (one segment per level), then further
	// back over checkpoint swaps, which have no increment.
	lo, step := g, uint64(2*SegmentFanout)
	for {
		incs, err := n.Publications(ctx, state, lo, g)
		if err != nil {
			return Increment{}, false, err
		}
		if len(incs) > 0 {
			return incs[len(incs)-1], true, nil
		}
		if lo == 0 || lo < state.Manifest.Oldest() {
			return Increment{}, false, nil
		}
		lo -= min(lo, step)
		step = 64 * SegmentFanout
	}
}

// Chains returns, for a version-2 state, the active chain and the retained
// ones as version 1 would list them (checkpoint plus every increment up to
// the next checkpoint), reading segments; for version 1 it is
// Manifest.Chains. Verify and the checkpoint builder use it.
func (n *Notebook) Chains(ctx context.Context, state State) ([]Chain, error) {
	m := state.Manifest
	if m == nil {
		return nil, nil
	}
	if m.Version < 2 {
		return m.Chains(), nil
	}
	from := m.Oldest()
	incs, err := n.Publications(ctx, state, from, m.Generation)
	if err != nil {
		return nil, err
	}
	return chainsOf(m, incs), nil
}

// ChainsAbove is Chains for the history above generation floor only (a
// Retention's Floor): the chains a reader of that history needs, reading
// only the segments that cover it, not the older publications the time
// window keeps listed.
func (n *Notebook) ChainsAbove(ctx context.Context, state State, floor uint64) ([]Chain, error) {
	m := state.Manifest
	if m == nil {
		return nil, nil
	}
	if m.Version < 2 {
		return m.Chains(), nil
	}
	incs, err := n.Publications(ctx, state, max(floor+1, m.Oldest()), m.Generation)
	if err != nil {
		return nil, err
	}
	return chainsOf(m, incs), nil
}

// ChainsBetween is ChainsAbove for the readers of generations from..to:
// the chains that hold them, each listing its increments from its first
// through to (the packs that reading a tree at or below to needs), not
// the rest of the retained history. A command that shows a few
// publications (log -n 10, show) reads the segments of the chains it
// shows, where ChainsAbove reads every retained one's (over a thousand
// for 10,000 publications). Chains that hold no generation of the range
// may be listed without their increments.
func (n *Notebook) ChainsBetween(ctx context.Context, state State, floor, from, to uint64) ([]Chain, error) {
	m := state.Manifest
	if m == nil {
		return nil, nil
	}
	if m.Version < 2 {
		return m.Chains(), nil
	}
	lo, hi := max(floor+1, m.Oldest()), min(to, m.Generation)
	// The chain that holds from begins after the newest checkpoint below
	// it (the checkpoints come newest first).
	for _, cp := range append([]Checkpoint{m.Checkpoint}, m.Checkpoints...) {
		if cp.Through < from {
			lo = max(lo, cp.Through+1)
			break
		}
	}
	var incs []Increment
	if lo <= hi {
		var err error
		if incs, err = n.Publications(ctx, state, lo, hi); err != nil {
			return nil, err
		}
	}
	return chainsOf(m, incs), nil
}

// chainsOf groups a v2 manifest's retained increments (oldest first) into
// chains: one per kept checkpoint, active first, each with the increments
// up to the next checkpoint; then the increments below the oldest kept
// checkpoint, a genesis chain when the history reaches generation 1 and a
// Partial one otherwise.
func chainsOf(m *Manifest, incs []Increment) []Chain {
	cps := append([]Checkpoint{m.Checkpoint}, m.Checkpoints...)
	// Publications lists increments in generation order, so each chain's
	// are one run of incs, found by binary search and shared, not copied
	// (the full slice expression keeps an append by a caller from writing
	// into the next chain's). Checked, not assumed: out of order, each
	// chain filters incs as a whole.
	sorted := slices.IsSortedFunc(incs, func(a, b Increment) int { return cmp.Compare(a.Generation, b.Generation) })
	within := func(lo, hi uint64) []Increment { // generations in (lo, hi]
		if !sorted {
			var run []Increment
			for _, inc := range incs {
				if inc.Generation > lo && inc.Generation <= hi {
					run = append(run, inc)
				}
			}
			return run
		}
		i := sort.Search(len(incs), func(i int) bool { return incs[i].Generation > lo })
		j := sort.Search(len(incs), func(j int) bool { return incs[j].Generation > hi })
		if i >= j {
			return nil
		}
		return incs[i:j:j]
	}
	var out []Chain
	upper := m.Generation
	for _, cp := range cps {
		c := Chain{Checkpoint: cp, Increments: within(cp.Through, upper)}
		if !cp.IsGenesis() || len(c.Increments) > 0 {
			out = append(out, c)
		}
		upper = cp.Through
	}
	if upper > 0 {
		base := Chain{Partial: len(incs) == 0 || incs[0].Generation != 1 || incs[0].Parent != (cas.ID{})}
		base.Increments = within(0, upper)
		if len(base.Increments) > 0 {
			out = append(out, base)
		}
	}
	return out
}

// Retention is how far back a state's history can be read: what the
// history commands (log, show, diff, restore, revert) and verify report as
// retained. A tree reads only from a whole chain (a kept checkpoint and
// the increments after it, or every increment from generation 1), so the
// oldest readable tree is the oldest kept checkpoint's; publications older
// than it that `current` still lists (kept by the time window, or the
// newest increment a checkpoint covers) cannot be shown, since the tree
// they were made on is gone.
type Retention struct {
	// Floor is the oldest generation whose tree reads (0: the history
	// reaches the empty notebook) and FloorHead the head at it (zero at 0).
	Floor     uint64
	FloorHead cas.ID
	// FloorCheckpoint is the kept checkpoint at Floor (the genesis at 0).
	FloorCheckpoint Checkpoint
	// Oldest is the oldest publication whose changes can be shown (above
	// Floor, so its parent's tree reads too); 0 when there is none (every
	// generation above Floor is a checkpoint swap).
	Oldest uint64
}

// Retention returns how far back state's history can be read. It reads
// only the segments that cover the generations just above the oldest kept
// checkpoint.
func (n *Notebook) Retention(ctx context.Context, state State) (Retention, error) {
	m := state.Manifest
	if m == nil {
		return Retention{}, nil
	}
	cp := m.Checkpoint
	switch {
	case m.Version < 2:
		chains := m.Chains()
		cp = chains[len(chains)-1].Checkpoint
	case m.Oldest() == 1:
		// Every increment from the first is listed (and its pack kept):
		// the chain from the empty notebook reads whole.
		cp = Checkpoint{}
	case len(m.Checkpoints) > 0:
		cp = m.Checkpoints[len(m.Checkpoints)-1]
	}
	if v4 := m.V4; v4 != nil {
		// A version-4 `current` lists its whole history; a sweep deletes
		// what lies below its oldest listed checkpoint, and says so by
		// deleting the first version-4 generation's proposal first.
		if oldest := v4.OldestCheckpointV4(); !oldest.IsGenesis() && oldest.Through >= v4.Upgraded && cp.Through < oldest.Through {
			swept, err := n.SweptV4(ctx, state)
			if err != nil {
				return Retention{}, err
			}
			if swept {
				cp = oldest
			}
		}
	}
	r := Retention{Floor: cp.Through, FloorHead: cp.Head, FloorCheckpoint: cp}
	// The oldest increment above the floor, from `current` alone when it
	// can tell: the oldest listed one, or one in the tail when the tail
	// reaches down to the floor. Otherwise swaps have no increment, so
	// look in growing windows (one segment per level each).
	if oldest := m.Oldest(); oldest > r.Floor || oldest == 0 {
		r.Oldest = oldest
		return r, nil
	}
	if tail := m.Increments; m.Version >= 2 && len(tail) > 0 && tail[0].Generation <= r.Floor+1 {
		for _, inc := range tail {
			if inc.Generation > r.Floor {
				r.Oldest = inc.Generation
				break
			}
		}
		return r, nil
	}
	for lo, w := cp.Through+1, uint64(2*SegmentFanout); lo <= m.Generation; lo, w = lo+w, w*8 {
		incs, err := n.Publications(ctx, state, lo, min(lo+w-1, m.Generation))
		if err != nil {
			return Retention{}, err
		}
		if len(incs) > 0 {
			r.Oldest = incs[0].Generation
			break
		}
		if lo+w < lo { // overflow: nothing further
			break
		}
	}
	return r, nil
}
