package remote

import (
	"fmt"
	"slices"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Manifest version 2 (docs/storage.md §3): `current` of bounded size.
//
// The tail (Increments) holds the newest increments in full: between
// TailKeep and MaxTail of them once the notebook has that many. When an
// append makes it MaxTail+1 long, its oldest SegmentFanout increments move
// into a new level-1 segment (an immutable object under index/, named by
// its range and content); when SegmentFanout segments of one level are
// listed, they move into one segment of the next level. So `current` lists
// at most SegmentFanout-1 segments per level and at most MaxTail
// increments: about 11 KiB at 100,000 increments (docs/storage.md §3.4).

// Bounds of version 2.
const (
	SegmentFanout   = 8                   // entries per segment: increments (level 1) or segments (level >= 2)
	TailKeep        = SegmentFanout       // increments a fold leaves in the tail
	MaxTail         = 2*SegmentFanout - 1 // increments `current` lists
	MaxSegmentLevel = 21                  // 8^21 > 2^63 increments
	MaxSegments     = MaxSegmentLevel * (SegmentFanout - 1)
)

// SegmentRef describes one segment listed in `current` or in a segment of
// the next level. Level 1 indexes up to SegmentFanout increments, level n
// up to SegmentFanout segments of level n-1; First and Last are the
// generations of the first and last increment it covers, Time the
// publication time of the last (Unix ms, 0 if unknown).
//
// Where it lives (docs/storage.md §3.6): a segment of version 2 is an
// object of its own, SegmentKey(Level, First, Last, Sum). From version 3
// on, the publication whose fold makes a segment carries it in its own
// pack, as a chunk object whose content is the segment's bytes: Carrier
// and CarrierPub name that increment (generation, publication ID), so the
// fold costs no upload of its own. Carrier 0 is a segment of its own.
type SegmentRef struct {
	Level       int
	First, Last uint64
	Time        uint64
	Sum         cas.ID // BLAKE3-256 of the segment's bytes; carried: the ID of the chunk object holding them
	Size        int64
	Carrier     uint64 // generation of the increment whose pack holds it; 0: its own object
	CarrierPub  string // that increment's publication ID
}

// Key returns the key of the object that holds the segment: its own, or
// its carrier's pack.
func (s SegmentRef) Key() string {
	if s.Carrier != 0 {
		return IncrementKey(s.Carrier, s.CarrierPub)
	}
	return SegmentKey(s.Level, s.First, s.Last, s.Sum)
}

// Carried reports whether the segment travels in an increment's pack.
func (s SegmentRef) Carried() bool { return s.Carrier != 0 }

// segmentBlob is a segment built by a fold: its descriptor and bytes.
type segmentBlob struct {
	ref  SegmentRef
	data []byte
}

// upgrade returns a version-2 copy of m (nil m: the empty notebook). A
// version-1 manifest keeps its generation, head and active checkpoint; the
// checkpoints of its retained chains become Checkpoints, and every
// increment it lists (retained chains oldest first, then the active chain)
// becomes the tail, which fold then moves into segments.
func (m *Manifest) upgrade() (*Manifest, error) {
	if err := m.refuseView(); err != nil {
		return nil, err
	}
	next := &Manifest{Version: ManifestVersion}
	if m == nil {
		return next, nil
	}
	if m.Version >= 2 {
		*next = *m
		next.Version = ManifestVersion
		next.Increments = slices.Clone(m.Increments)
		next.Segments = slices.Clone(m.Segments)
		next.Checkpoints = slices.Clone(m.Checkpoints)
		next.uploads = nil
		return next, nil
	}
	next.Generation, next.Head, next.Checkpoint = m.Generation, m.Head, m.Checkpoint
	for i := len(m.Retained) - 1; i >= 0; i-- {
		next.Increments = append(next.Increments, m.Retained[i].Increments...)
	}
	next.Increments = append(next.Increments, m.Increments...)
	for _, c := range m.Retained {
		if !c.Checkpoint.IsGenesis() {
			next.Checkpoints = append(next.Checkpoints, c.Checkpoint)
		}
	}
	return next, nil
}

// fold moves the oldest increments of an overlong tail into segments and
// merges full runs of segments of one level into the next (see above).
// carry makes the newest increment (the publication being appended) the
// carrier of every segment the fold creates; otherwise each is an object
// of its own that the publisher uploads.
func (m *Manifest) fold(carry bool) {
	var carrier Increment
	if carry {
		carrier = m.Increments[len(m.Increments)-1]
	}
	for len(m.Increments) > MaxTail {
		leaf := encodeSegment(1, m.Increments[:SegmentFanout], nil, carrier)
		m.Increments = slices.Clone(m.Increments[SegmentFanout:])
		m.addSegment(leaf)
		for level := 1; level < MaxSegmentLevel; level++ {
			n := 0
			for i := len(m.Segments) - 1; i >= 0 && m.Segments[i].Level == level; i-- {
				n++
			}
			if n < SegmentFanout {
				break
			}
			at := len(m.Segments) - n
			inner := encodeSegment(level+1, nil, m.Segments[at:], carrier)
			m.Segments = m.Segments[:at]
			m.addSegment(inner)
		}
	}
}

// addSegment lists b's descriptor and records b in uploads: the segments
// Publish must upload (or, carried, find in the pack).
func (m *Manifest) addSegment(b segmentBlob) {
	m.Segments = append(m.Segments, b.ref)
	m.uploads = append(m.uploads, b)
}

// Carried returns the objects a publication with ID publication, appended
// to m (nil: the empty notebook), must carry in its pack: one chunk per
// segment its fold creates (none for most publications, one or a few for
// one in SegmentFanout). A publisher that adds them to its pack makes its
// commit three requests; Publish uploads the segments on their own when
// the pack lacks them. The segments do not depend on the new increment's
// head or pack, only on its generation and publication ID.
func (m *Manifest) Carried(publication string) []cas.Object {
	if m != nil && m.Version >= 2 && len(m.Increments) < MaxTail {
		return nil // no fold: the common case, no copy of the tail
	}
	next, err := m.upgrade()
	if err != nil {
		return nil
	}
	gen, err := NextGeneration(next.Generation)
	if err != nil {
		return nil
	}
	next.Increments = append(next.Increments, Increment{Generation: gen, Publication: publication})
	next.fold(true)
	var out []cas.Object
	for _, b := range next.uploads {
		if o, err := cas.ChunkObject(b.data); err == nil {
			out = append(out, o)
		}
	}
	return out
}

// carriedIn reports whether pack holds every segment m's fold created as
// a chunk object (see Carried).
func (m *Manifest) carriedIn(pack *cas.Pack) bool {
	for _, b := range m.uploads {
		if _, err := pack.Get(b.ref.Sum); err != nil {
			return false
		}
	}
	return true
}

// swapCheckpointV2 is SwapCheckpoint on a version-2 manifest: cp becomes
// the active checkpoint, the old one the newest retained checkpoint (at
// most retain are kept), the generation advances by one, head and tail
// stay. Segments wholly at or below the oldest kept checkpoint whose last
// publication is older than keepAfter (Unix ms) leave `current`: that is
// the retention window (docs/operations.md). cp must be newer than the
// active checkpoint and reach a generation that holds an increment; when
// that increment is still in the tail, its head must be cp.Head.
func (m *Manifest) swapCheckpointV2(cp Checkpoint, retain int, keepAfter uint64) (*Manifest, error) {
	if cp.Through <= m.Checkpoint.Through || cp.Through > m.Generation || cp.IsGenesis() {
		return nil, fmt.Errorf("%w: the checkpoint is not newer than the active one", ErrCorruptManifest)
	}
	if len(m.Increments) > 0 && cp.Through >= m.Increments[0].Generation {
		found := false
		for _, inc := range m.Increments {
			if inc.Generation == cp.Through {
				found = inc.Head == cp.Head
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: the checkpoint does not end at an increment of its head", ErrCorruptManifest)
		}
	}
	gen, err := NextGeneration(m.Generation)
	if err != nil {
		return nil, err
	}
	next, _ := m.upgrade()
	next.Generation = gen
	// The replaced checkpoint (the genesis too) and the older ones, newest
	// first, at most retain: their chains stay readable.
	kept := append([]Checkpoint{m.Checkpoint}, next.Checkpoints...)
	kept = kept[:min(max(retain, 0), len(kept))]
	floor := cp.Through
	if n := len(kept); n > 0 {
		floor = kept[n-1].Through
	}
	next.Checkpoints = nil
	for _, k := range kept {
		if !k.IsGenesis() {
			next.Checkpoints = append(next.Checkpoints, k)
		}
	}
	next.Checkpoint = cp
	drop := 0
	for drop < len(next.Segments) && next.Segments[drop].Last <= floor && next.Segments[drop].Time < keepAfter && floor > 0 {
		drop++
	}
	next.Segments = next.Segments[drop:]
	if len(next.Segments) == 0 {
		// The tail's oldest increments may be out of the window too; the
		// newest always stays (it names head).
		cut := 0
		for cut < len(next.Increments)-1 && next.Increments[cut].Generation <= floor && next.Increments[cut].Time < keepAfter && floor > 0 {
			cut++
		}
		next.Increments = slices.Clone(next.Increments[cut:])
	}
	if err := next.Validate(); err != nil {
		return nil, err
	}
	return next, nil
}

// validateV2 checks every rule of manifest version 2 (docs/storage.md
// §3.3). Rules that need objects other than `current` (a checkpoint's head
// against a folded increment, a segment's contents) are verify's.
func (m *Manifest) validateV2() error {
	if m.Version != 2 && m.Version != 3 {
		return fmt.Errorf("version %d", m.Version)
	}
	if m.Generation == 0 {
		return fmt.Errorf("generation 0 is the absent manifest, never written")
	}
	if m.Head.IsZero() {
		return fmt.Errorf("head is zero")
	}
	if m.Upgraded == 0 || m.Upgraded > m.Generation {
		return fmt.Errorf("upgraded generation %d outside 1..%d", m.Upgraded, m.Generation)
	}
	if len(m.Retained) > 0 {
		return fmt.Errorf("retained chains in a version-2 manifest")
	}
	seen := map[string]bool{}
	if !m.Checkpoint.IsGenesis() {
		if err := validateCheckpoint(m.Checkpoint, seen); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if m.Checkpoint.Through >= m.Generation {
			return fmt.Errorf("the checkpoint reaches generation %d, not below generation %d", m.Checkpoint.Through, m.Generation)
		}
	} else if len(m.Checkpoints) > 0 {
		return fmt.Errorf("retained checkpoints without an active one")
	}
	if len(m.Checkpoints) > MaxRetained {
		return fmt.Errorf("%d retained checkpoints, more than %d", len(m.Checkpoints), MaxRetained)
	}
	newer := m.Checkpoint.Through
	for i, cp := range m.Checkpoints {
		if cp.IsGenesis() {
			return fmt.Errorf("retained checkpoint %d is the genesis", i)
		}
		if err := validateCheckpoint(cp, seen); err != nil {
			return fmt.Errorf("retained checkpoint %d: %w", i, err)
		}
		if cp.Through >= newer {
			return fmt.Errorf("retained checkpoint %d is not older than the one before it", i)
		}
		newer = cp.Through
	}
	if len(m.Segments) > MaxSegments {
		return fmt.Errorf("%d segments, more than %d", len(m.Segments), MaxSegments)
	}
	var prev uint64
	for i, s := range m.Segments {
		if err := validateSegmentRef(s, m.Version); err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
		if s.Carrier > m.Generation {
			return fmt.Errorf("segment %d: carried by generation %d, beyond generation %d", i, s.Carrier, m.Generation)
		}
		if i > 0 && (s.First <= prev || s.Level > m.Segments[i-1].Level) {
			return fmt.Errorf("segment %d is out of order", i)
		}
		run := 1
		for j := i - 1; j >= 0 && m.Segments[j].Level == s.Level; j-- {
			run++
		}
		if run >= SegmentFanout {
			return fmt.Errorf("%d segments of level %d, not folded", run, s.Level)
		}
		prev = s.Last
	}
	if len(m.Increments) == 0 || len(m.Increments) > MaxTail {
		return fmt.Errorf("%d increments in the tail, want 1..%d", len(m.Increments), MaxTail)
	}
	for i, inc := range m.Increments {
		if inc.Generation <= prev && (i > 0 || len(m.Segments) > 0) {
			return fmt.Errorf("increment %d: generation %d does not follow %d", i, inc.Generation, prev)
		}
		if i > 0 && inc.Parent != m.Increments[i-1].Head {
			return fmt.Errorf("increment %d: parent is not the previous head", i)
		}
		if err := validateIncrement(inc, seen); err != nil {
			return fmt.Errorf("increment %d: %w", i, err)
		}
		prev = inc.Generation
	}
	if prev > m.Generation {
		return fmt.Errorf("an increment of generation %d, beyond generation %d", prev, m.Generation)
	}
	if m.Increments[len(m.Increments)-1].Head != m.Head {
		return fmt.Errorf("the newest increment does not reach head")
	}
	return nil
}

func validateCheckpoint(cp Checkpoint, seen map[string]bool) error {
	if cp.Through == 0 || cp.Head.IsZero() || !IsPublicationID(cp.Publication) {
		return fmt.Errorf("a checkpoint needs a through-generation, a head and a publication ID")
	}
	if err := checkPackRef(cp.Pack, CheckpointsPrefix, cp.Through, cp.Publication); err != nil {
		return err
	}
	return unique(seen, "publication", cp.Publication)
}

// validateIncrement checks one increment's own fields (not its place).
func validateIncrement(inc Increment, seen map[string]bool) error {
	if inc.Generation == 0 {
		return fmt.Errorf("generation 0")
	}
	if inc.Head.IsZero() || inc.Head == inc.Parent {
		return fmt.Errorf("head is zero or equals its parent")
	}
	if !IsPublicationID(inc.Publication) {
		return fmt.Errorf("publication is not a UUIDv7")
	}
	if err := checkPackRef(inc.Pack, IncrementsPrefix, inc.Generation, inc.Publication); err != nil {
		return err
	}
	if seen == nil {
		return nil
	}
	return unique(seen, "publication", inc.Publication)
}

// validateSegmentRef checks one descriptor's own fields; version is the
// version of the object that lists it (carriers exist from version 3 on).
func validateSegmentRef(s SegmentRef, version int) error {
	switch {
	case s.Carrier != 0 && version < 3:
		return fmt.Errorf("a carried segment in a version-%d object", version)
	case s.Carrier != 0 && (s.Carrier <= s.Last || !IsPublicationID(s.CarrierPub)):
		return fmt.Errorf("carrier %d %q: not a publication after the segment's range", s.Carrier, s.CarrierPub)
	case s.Carrier == 0 && s.CarrierPub != "":
		return fmt.Errorf("a carrier publication without a carrier")
	case s.Level < 1 || s.Level > MaxSegmentLevel:
		return fmt.Errorf("level %d outside 1..%d", s.Level, MaxSegmentLevel)
	case s.First == 0 || s.First > s.Last:
		return fmt.Errorf("range %d..%d", s.First, s.Last)
	case s.Size <= 0 || s.Size > MaxSegmentBytes:
		return fmt.Errorf("size %d outside (0, %d]", s.Size, MaxSegmentBytes)
	case s.Sum.IsZero():
		return fmt.Errorf("checksum is zero")
	}
	return nil
}
