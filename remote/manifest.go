package remote

import (
	"fmt"
	"math"

	"github.com/slivingdoc/slivingdoc/cas"
)

// ManifestVersion is the `current` format this build writes. It reads
// versions 1 and 2 as well and upgrades such a store with its first
// publication (docs/storage.md §3). Version 3 is version 2 plus segments
// carried in increment packs (§3.6).
const ManifestVersion = 3

// Bounds a decoded manifest must respect. They are far above what the
// defaults produce (1,024 increments per chain, 1 retained chain) and exist
// so that a hostile or corrupt `current` cannot make a reader allocate
// without limit.
const (
	MaxManifestBytes = 64 << 20
	MaxIncrements    = 1 << 20 // per chain
	MaxRetained      = 256
	MaxPackSize      = 1 << 40
)

// PackRef names one pack in the manifest and how to verify it.
type PackRef struct {
	Key  string
	Sum  cas.ID // BLAKE3-256 of the whole pack
	Size int64
}

// Increment is one accepted publication. Its pack key is
// IncrementKey(Generation, Publication).
type Increment struct {
	Generation  uint64
	Publication string
	Parent      cas.ID // the head it was published on; zero for the first commit
	Head        cas.ID
	Pack        PackRef
	Time        uint64 // v2: Unix milliseconds of the publication; 0 when unknown (v1)
	// Group (a version-4 generation a fold re-parented, view_v4.go): the
	// group pack holding its re-parented trees and commit besides Pack.
	Group PackRef
	// Author (version 4): who published it, as claimed; "" when unknown.
	Author string
}

// Checkpoint describes the pack holding the full closure of Head, the state
// after generation Through. The zero Checkpoint is the genesis: no pack,
// zero head, through generation 0 — the base of every notebook that has
// not been checkpointed yet. A real checkpoint's pack key is
// CheckpointKey(Through, Publication).
type Checkpoint struct {
	Pack        PackRef
	Head        cas.ID
	Through     uint64
	Publication string // the ID of the write that swapped the checkpoint in
}

// IsGenesis reports whether c is the genesis checkpoint (no pack).
func (c Checkpoint) IsGenesis() bool { return c == Checkpoint{} }

// Chain is a checkpoint plus the increments applied on top of it, oldest
// first. A reader that has every pack of a chain can read its head.
type Chain struct {
	Checkpoint Checkpoint
	Increments []Increment
	// Partial (version 2 only): the oldest retained increments, whose
	// base checkpoint is no longer kept; listed, not readable as a chain.
	Partial bool
}

// Head returns the commit the chain reaches.
func (c Chain) Head() cas.ID {
	if n := len(c.Increments); n > 0 {
		return c.Increments[n-1].Head
	}
	return c.Checkpoint.Head
}

// Reach returns the last generation the chain covers.
func (c Chain) Reach() uint64 {
	if n := len(c.Increments); n > 0 {
		return c.Increments[n-1].Generation
	}
	return c.Checkpoint.Through
}

// Packs returns the chain's packs in the order a reader applies them:
// the checkpoint's (unless genesis), then each increment's.
func (c Chain) Packs() []PackRef {
	out := make([]PackRef, 0, len(c.Increments)+1)
	if !c.Checkpoint.IsGenesis() {
		out = append(out, c.Checkpoint.Pack)
	}
	var groups map[string]bool
	for _, inc := range c.Increments {
		out = append(out, inc.Pack)
		// One group pack serves every member of its fold: listed once.
		if inc.Group.Key != "" && !groups[inc.Group.Key] {
			if groups == nil {
				groups = map[string]bool{}
			}
			groups[inc.Group.Key] = true
			out = append(out, inc.Group)
		}
	}
	return out
}

// Manifest is the decoded `current` object.
//
// Version 1: the active chain is Checkpoint + Increments and reaches Head;
// Retained holds the chains that earlier checkpoints replaced, newest
// first, each reaching the head of the checkpoint that replaced it.
//
// Version 2 (manifest_v2.go): Increments holds only the newest increments
// (the tail, at most MaxTail); Segments index every older retained
// increment, oldest first; Checkpoints are the retained older checkpoints,
// newest first; Retained is always empty. Upgraded is the first generation
// written under version 2 (1 for a store born at version 2): increments
// from it on carry the closure rule of docs/storage.md §5 that lets a
// reader skip increments through rollups.
type Manifest struct {
	Version    int    // 1, 2 or 3 as decoded; what this build writes is ManifestVersion
	Generation uint64 // +1 on every accepted replacement of `current`, never reset
	Head       cas.ID
	Increments []Increment
	Checkpoint Checkpoint
	Retained   []Chain

	Upgraded    uint64
	Segments    []SegmentRef
	Checkpoints []Checkpoint

	// uploads are the segments a v2 operation created that the store does
	// not hold yet: Publish and Checkpoint put them before `current`.
	uploads []segmentBlob

	// V4 is set on the read-only view of a version-4 `current`
	// (view_v4.go): the decoded manifest, which only package publish
	// writes.
	V4 *ManifestV4
}

// ActiveLength is how many generations the active checkpoint is behind
// head: the length a checkpoint would fold (version 1: the active
// increments).
func (m *Manifest) ActiveLength() int {
	if m == nil {
		return 0
	}
	if m.Version < 2 {
		return len(m.Increments)
	}
	through, n := m.Checkpoint.Through, 0
	for _, inc := range m.Increments {
		if inc.Generation > through {
			n++
		}
	}
	if len(m.Increments) > 0 && m.Increments[0].Generation > through+1 && len(m.Segments) > 0 && m.Segments[len(m.Segments)-1].Last > through {
		// Some are folded into segments: count their generations (an
		// upper bound: checkpoint swaps took some).
		n += int(min(m.Increments[0].Generation-through-1, math.MaxInt32))
	}
	return n
}

// Active returns the active chain (version 1; in version 2 the tail on top
// of the active checkpoint, see Notebook.Chains for the whole chain).
func (m *Manifest) Active() Chain {
	return Chain{Checkpoint: m.Checkpoint, Increments: m.Increments}
}

// Packs returns every pack of the active chain in the order a reader
// applies them (checkpoint first, then increments).
func (m *Manifest) Packs() []PackRef { return m.Active().Packs() }

// Chains returns the active chain followed by the retained ones.
func (m *Manifest) Chains() []Chain {
	return append([]Chain{m.Active()}, m.Retained...)
}

// Heads returns the head of every chain (active first): the commits whose
// closure verify must find complete.
func (m *Manifest) Heads() []cas.ID {
	var out []cas.ID
	for _, c := range m.Chains() {
		out = append(out, c.Head())
	}
	return out
}

// Referenced returns the key of every pack any chain references: what
// cleanup must never delete.
func (m *Manifest) Referenced() map[string]PackRef {
	out := map[string]PackRef{}
	for _, c := range m.Chains() {
		for _, p := range c.Packs() {
			out[p.Key] = p
		}
	}
	return out
}

// FindPublication returns the increment published with ID pub, searching
// the active chain and then the retained chains.
func (m *Manifest) FindPublication(pub string) (Increment, bool) {
	return m.findIncrement(func(inc Increment) bool { return inc.Publication == pub })
}

// findIncrement returns the first increment, active chain first, that
// match accepts.
func (m *Manifest) findIncrement(match func(Increment) bool) (Increment, bool) {
	for _, c := range m.Chains() {
		for _, inc := range c.Increments {
			if match(inc) {
				return inc, true
			}
		}
	}
	return Increment{}, false
}

// NextGeneration returns g+1, refusing to wrap.
func NextGeneration(g uint64) (uint64, error) {
	if g == math.MaxUint64 {
		return 0, fmt.Errorf("%w: generation %d", ErrGenerationOverflow, g)
	}
	return g + 1, nil
}

// Extend returns the manifest that accepts one more increment on top of m
// (nil m is the empty notebook), with an unknown publication time. See
// ExtendAt.
func (m *Manifest) Extend(publication string, head cas.ID, pack PackRef) (*Manifest, error) {
	return m.ExtendAt(publication, head, pack, 0)
}

// ExtendAt returns the version-2 manifest that accepts one more increment
// on top of m (nil m is the empty notebook; a version-1 m is upgraded):
// generation +1, head moved, the increment appended to the tail, and the
// tail folded into segments when it grows past MaxTail (manifest_v2.go).
// at is the publication time in Unix milliseconds. m is not modified; the
// segments the fold created are uploaded by Publish before `current`.
func (m *Manifest) ExtendAt(publication string, head cas.ID, pack PackRef, at uint64) (*Manifest, error) {
	return m.extendAt(publication, head, pack, at, false)
}

// extendAt is ExtendAt; carry makes the new increment the carrier of the
// segments its fold creates (its pack must hold them, see Carried).
func (m *Manifest) extendAt(publication string, head cas.ID, pack PackRef, at uint64, carry bool) (*Manifest, error) {
	next, err := m.upgrade()
	if err != nil {
		return nil, err
	}
	gen, err := NextGeneration(next.Generation)
	if err != nil {
		return nil, err
	}
	if next.Upgraded == 0 {
		next.Upgraded = gen
	}
	next.Increments = append(next.Increments, Increment{
		Generation:  gen,
		Publication: publication,
		Parent:      next.Head,
		Head:        head,
		Pack:        pack,
		Time:        at,
	})
	next.Generation = gen
	next.Head = head
	next.fold(carry)
	if err := next.Validate(); err != nil {
		return nil, err
	}
	return next, nil
}

// SwapCheckpoint returns the manifest that makes cp the active checkpoint:
// cp must cover a prefix of the active chain (cp.Through is the generation
// of an active increment and cp.Head its head). The increments after it stay
// active; the replaced prefix (old checkpoint plus increments up to
// cp.Through) becomes the newest retained chain, and only the newest retain
// retained chains are kept. The generation advances by one, like any
// replacement of `current`. m is not modified.
func (m *Manifest) SwapCheckpoint(cp Checkpoint, retain int) (*Manifest, error) {
	if err := m.refuseView(); err != nil {
		return nil, err
	}
	if m.Version >= 2 {
		return m.swapCheckpointV2(cp, retain, math.MaxUint64)
	}
	cut := -1
	for i, inc := range m.Increments {
		if inc.Generation == cp.Through {
			cut = i
			break
		}
	}
	if cut < 0 || m.Increments[cut].Head != cp.Head {
		return nil, fmt.Errorf("%w: the checkpoint does not end at an active increment", ErrCorruptManifest)
	}
	gen, err := NextGeneration(m.Generation)
	if err != nil {
		return nil, err
	}
	next := *m
	next.Generation = gen
	next.Checkpoint = cp
	next.Increments = append([]Increment(nil), m.Increments[cut+1:]...)
	replaced := Chain{Checkpoint: m.Checkpoint, Increments: append([]Increment(nil), m.Increments[:cut+1]...)}
	next.Retained = append([]Chain{replaced}, m.Retained...)
	next.Retained = next.Retained[:min(max(retain, 0), len(next.Retained))]
	if len(next.Retained) == 0 {
		next.Retained = nil
	}
	if err := next.Validate(); err != nil {
		return nil, err
	}
	return &next, nil
}

// Validate checks every rule of manifest version 1 (docs/storage.md):
//   - generation >= 1 and head non-zero;
//   - every chain is consistent: a genesis or well-formed checkpoint, then
//     increments with strictly increasing generations above the checkpoint's
//     through-generation, each one's parent the previous head (the
//     checkpoint's head for the first), pack keys derived from generation
//     and publication, sizes in (0, MaxPackSize];
//   - the active chain reaches Head and no generation above Generation;
//   - retained chains are newest first and each reaches exactly the head and
//     through-generation of the checkpoint that replaced it;
//   - publication IDs and pack keys are unique across the manifest.
//
// An error wraps ErrCorruptManifest.
func (m *Manifest) Validate() error {
	validate := m.validate
	if m.Version >= 2 {
		validate = m.validateV2
	}
	if err := validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrCorruptManifest, err)
	}
	return nil
}

func (m *Manifest) validate() error {
	if m.Generation == 0 {
		return fmt.Errorf("generation 0 is the absent manifest, never written")
	}
	if m.Head.IsZero() {
		return fmt.Errorf("head is zero")
	}
	if len(m.Retained) > MaxRetained {
		return fmt.Errorf("%d retained chains, more than %d", len(m.Retained), MaxRetained)
	}
	seen := make(map[string]bool, len(m.Increments)+1)
	active := m.Active()
	if err := validateChain(active, seen); err != nil {
		return fmt.Errorf("active chain: %w", err)
	}
	if active.Head() != m.Head {
		return fmt.Errorf("the active chain does not reach head")
	}
	if active.Reach() > m.Generation {
		return fmt.Errorf("the active chain reaches generation %d, beyond generation %d", active.Reach(), m.Generation)
	}
	if m.Checkpoint.IsGenesis() && len(m.Retained) > 0 {
		return fmt.Errorf("retained chains without a checkpoint")
	}
	newer := m.Checkpoint
	for i, c := range m.Retained {
		if err := validateChain(c, seen); err != nil {
			return fmt.Errorf("retained chain %d: %w", i, err)
		}
		if c.Head() != newer.Head || c.Reach() != newer.Through {
			return fmt.Errorf("retained chain %d does not reach the checkpoint that replaced it", i)
		}
		if !c.Checkpoint.IsGenesis() && c.Checkpoint.Through >= newer.Through {
			return fmt.Errorf("retained chain %d is not older than the checkpoint that replaced it", i)
		}
		if c.Checkpoint.IsGenesis() && i != len(m.Retained)-1 {
			return fmt.Errorf("retained chain %d starts at genesis but is not the oldest", i)
		}
		newer = c.Checkpoint
	}
	return nil
}

// validateChain checks one chain's internal rules; seen collects
// publication IDs and pack keys to refuse duplicates across chains.
func validateChain(c Chain, seen map[string]bool) error {
	if len(c.Increments) > MaxIncrements {
		return fmt.Errorf("%d increments, more than %d", len(c.Increments), MaxIncrements)
	}
	cp := c.Checkpoint
	if !cp.IsGenesis() {
		if cp.Through == 0 || cp.Head.IsZero() || !IsPublicationID(cp.Publication) {
			return fmt.Errorf("checkpoint needs a through-generation, a head and a publication ID")
		}
		if err := checkPackRef(cp.Pack, CheckpointsPrefix, cp.Through, cp.Publication); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if err := unique(seen, "publication", cp.Publication); err != nil {
			return err
		}
	}
	prevGen, prevHead := cp.Through, cp.Head
	for i, inc := range c.Increments {
		if inc.Generation <= prevGen {
			return fmt.Errorf("increment %d: generation %d does not follow %d", i, inc.Generation, prevGen)
		}
		if inc.Parent != prevHead {
			return fmt.Errorf("increment %d: parent is not the previous head", i)
		}
		if inc.Head.IsZero() || inc.Head == inc.Parent {
			return fmt.Errorf("increment %d: head is zero or equals its parent", i)
		}
		if !IsPublicationID(inc.Publication) {
			return fmt.Errorf("increment %d: publication is not a UUIDv7", i)
		}
		if err := checkPackRef(inc.Pack, IncrementsPrefix, inc.Generation, inc.Publication); err != nil {
			return fmt.Errorf("increment %d: %w", i, err)
		}
		if err := unique(seen, "publication", inc.Publication); err != nil {
			return err
		}
		prevGen, prevHead = inc.Generation, inc.Head
	}
	if c.Head().IsZero() {
		return fmt.Errorf("the chain is empty")
	}
	return nil
}

func checkPackRef(p PackRef, prefix string, generation uint64, publication string) error {
	if !isPackKey(p.Key, prefix, generation, publication) {
		return fmt.Errorf("pack key %q is not %q", p.Key, packKey(prefix, generation, publication))
	}
	if p.Size <= 0 || p.Size > MaxPackSize {
		return fmt.Errorf("pack size %d outside (0, %d]", p.Size, int64(MaxPackSize))
	}
	if p.Sum.IsZero() {
		return fmt.Errorf("pack checksum is zero")
	}
	return nil
}

func unique(seen map[string]bool, what, v string) error {
	if seen[v] {
		return fmt.Errorf("duplicate %s %s", what, v)
	}
	seen[v] = true
	return nil
}
