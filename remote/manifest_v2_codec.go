package remote

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
)

// The version-2 and version-3 encodings (docs/storage.md §3.2, §3.5 and
// §3.6): `current` and segment objects are compact JSON with fields in a
// fixed order, like version 1, and decoded by the same strict parser.
// Version 3 differs only in the version fields and in segment
// descriptors, which may name a carrier ("carrier", "publication": both
// present or both absent; absent in version 2).

// MaxSegmentBytes bounds one segment object (a level-1 segment of eight
// increments is about 2.7 KiB).
const MaxSegmentBytes = 64 << 10

// SegmentsPrefix is where segment objects live.
const SegmentsPrefix = "index/"

const segmentSuffix = ".seg"

// SegmentKey is index/<level, 2 digits>-<first, 20 digits>-<last, 20
// digits>-<BLAKE3, 64 hex>.seg: the range lets cleanup date a segment from
// a listing, the checksum makes the key name one content only.
func SegmentKey(level int, first, last uint64, sum cas.ID) string {
	return fmt.Sprintf("%s%02d-%020d-%020d-%s%s", SegmentsPrefix, level, first, last, sum, segmentSuffix)
}

// ParseSegmentKey returns the level and range a segment key names.
func ParseSegmentKey(key string) (level int, first, last uint64, sum cas.ID, err error) {
	rest, ok := strings.CutPrefix(key, SegmentsPrefix)
	rest, ok2 := strings.CutSuffix(rest, segmentSuffix)
	parts := strings.Split(rest, "-")
	bad := fmt.Errorf("%w: %q is not a segment key", ErrInvalidKey, key)
	if !ok || !ok2 || len(parts) != 4 || len(parts[0]) != 2 || len(parts[1]) != 20 || len(parts[2]) != 20 || len(parts[3]) != 64 {
		return 0, 0, 0, cas.ID{}, bad
	}
	l, err1 := strconv.ParseUint(parts[0], 10, 8)
	f, err2 := strconv.ParseUint(parts[1], 10, 64)
	t, err3 := strconv.ParseUint(parts[2], 10, 64)
	b, err4 := hex.DecodeString(parts[3])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || parts[3] != strings.ToLower(parts[3]) {
		return 0, 0, 0, cas.ID{}, bad
	}
	copy(sum[:], b)
	return int(l), f, t, sum, nil
}

// encodeManifestV2 returns the canonical bytes of a validated v2 manifest.
func encodeManifestV2(m *Manifest) []byte {
	b := make([]byte, 0, 1024+340*len(m.Increments)+160*len(m.Segments))
	b = strconv.AppendInt(append(b, `{"version":`...), int64(m.Version), 10)
	b = append(b, `,"generation":`...)
	b = strconv.AppendUint(b, m.Generation, 10)
	b = appendID(append(b, `,"head":`...), m.Head)
	b = strconv.AppendUint(append(b, `,"upgraded":`...), m.Upgraded, 10)
	b = appendCheckpoint(append(b, `,"checkpoint":`...), m.Checkpoint)
	b = append(b, `,"checkpoints":[`...)
	for i, cp := range m.Checkpoints {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCheckpoint(b, cp)
	}
	b = appendSegmentRefs(append(b, `],"segments":`...), m.Segments)
	b = appendIncrementsV2(append(b, `,"increments":`...), m.Increments)
	return append(b, "}\n"...)
}

func appendCheckpoint(b []byte, cp Checkpoint) []byte {
	b = appendString(append(b, `{"key":`...), cp.Pack.Key)
	b = appendID(append(b, `,"blake3":`...), cp.Pack.Sum)
	b = strconv.AppendInt(append(b, `,"size":`...), cp.Pack.Size, 10)
	b = appendID(append(b, `,"head":`...), cp.Head)
	b = strconv.AppendUint(append(b, `,"through":`...), cp.Through, 10)
	b = appendString(append(b, `,"publication":`...), cp.Publication)
	return append(b, '}')
}

func appendSegmentRefs(b []byte, segs []SegmentRef) []byte {
	b = append(b, '[')
	for i, s := range segs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `{"level":`...), int64(s.Level), 10)
		b = strconv.AppendUint(append(b, `,"first":`...), s.First, 10)
		b = strconv.AppendUint(append(b, `,"last":`...), s.Last, 10)
		b = strconv.AppendUint(append(b, `,"time":`...), s.Time, 10)
		b = appendID(append(b, `,"blake3":`...), s.Sum)
		b = strconv.AppendInt(append(b, `,"size":`...), s.Size, 10)
		if s.Carrier != 0 {
			b = strconv.AppendUint(append(b, `,"carrier":`...), s.Carrier, 10)
			b = appendString(append(b, `,"publication":`...), s.CarrierPub)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendIncrementsV2 writes increments without their pack key, which is
// derived from generation and publication.
func appendIncrementsV2(b []byte, incs []Increment) []byte {
	b = append(b, '[')
	for i, inc := range incs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(append(b, `{"generation":`...), inc.Generation, 10)
		b = appendString(append(b, `,"publication":`...), inc.Publication)
		b = appendID(append(b, `,"parent":`...), inc.Parent)
		b = appendID(append(b, `,"head":`...), inc.Head)
		b = strconv.AppendUint(append(b, `,"time":`...), inc.Time, 10)
		b = appendID(append(b, `,"blake3":`...), inc.Pack.Sum)
		b = strconv.AppendInt(append(b, `,"size":`...), inc.Pack.Size, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// Field names of version 2, in encoding order.
var (
	manifestV2Fields  = []string{"version", "generation", "head", "upgraded", "checkpoint", "checkpoints", "segments", "increments"}
	segmentRefFields  = []string{"level", "first", "last", "time", "blake3", "size", "carrier", "publication"}
	incrementV2Fields = []string{"generation", "publication", "parent", "head", "time", "blake3", "size"}
	segmentFields     = []string{"version", "level", "first", "last", "increments", "segments"}
)

// optionalCarrier marks "carrier" and "publication" of segmentRefFields.
const optionalCarrier = 1<<6 | 1<<7

// decodeManifestV2 decodes a `current` whose version field (already read
// by the caller's first look) is 2 or 3.
func decodeManifestV2(data []byte) (*Manifest, error) {
	p := &parser{b: data}
	m := &Manifest{Version: 2}
	err := p.object(manifestV2Fields, func(field int) error {
		switch field {
		case 0:
			v, err := p.uint()
			if err == nil && v != 2 && v != 3 {
				err = fmt.Errorf("version %d", v)
			}
			m.Version = int(v)
			return err
		case 1:
			return p.uintTo(&m.Generation)
		case 2:
			return p.idTo(&m.Head)
		case 3:
			return p.uintTo(&m.Upgraded)
		case 4:
			return p.checkpoint(&m.Checkpoint)
		case 5:
			return p.array(MaxRetained, func() error {
				var cp Checkpoint
				err := p.checkpoint(&cp)
				m.Checkpoints = append(m.Checkpoints, cp)
				return err
			})
		case 6:
			return p.segmentRefs(&m.Segments, MaxSegments)
		default:
			return p.incrementsV2(&m.Increments, MaxTail)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return m, nil
}

func (p *parser) end() error {
	p.ws()
	if p.i != len(p.b) {
		return fmt.Errorf("offset %d: data after the object", p.i)
	}
	return nil
}

func (p *parser) segmentRefs(dst *[]SegmentRef, max int) error {
	return p.array(max, func() error {
		var s SegmentRef
		seen := 0
		err := p.objectOpt(segmentRefFields, optionalCarrier, func(field int) error {
			switch field {
			case 0:
				v, err := p.uint()
				if err == nil && v > MaxSegmentLevel {
					err = fmt.Errorf("level %d", v)
				}
				s.Level = int(v)
				return err
			case 1:
				return p.uintTo(&s.First)
			case 2:
				return p.uintTo(&s.Last)
			case 3:
				return p.uintTo(&s.Time)
			case 4:
				return p.idTo(&s.Sum)
			case 5:
				return p.sizeTo(&s.Size)
			case 6:
				seen++
				err := p.uintTo(&s.Carrier)
				if err == nil && s.Carrier == 0 {
					err = fmt.Errorf("carrier 0 is written as no carrier")
				}
				return err
			default:
				seen++
				return p.stringTo(&s.CarrierPub)
			}
		})
		if err == nil && seen == 1 {
			err = fmt.Errorf("a segment descriptor with only one of carrier and publication")
		}
		*dst = append(*dst, s)
		return err
	})
}

func (p *parser) incrementsV2(dst *[]Increment, max int) error {
	return p.array(max, func() error {
		var inc Increment
		err := p.object(incrementV2Fields, func(field int) error {
			switch field {
			case 0:
				return p.uintTo(&inc.Generation)
			case 1:
				return p.stringTo(&inc.Publication)
			case 2:
				return p.idTo(&inc.Parent)
			case 3:
				return p.idTo(&inc.Head)
			case 4:
				return p.uintTo(&inc.Time)
			case 5:
				return p.idTo(&inc.Pack.Sum)
			default:
				return p.sizeTo(&inc.Pack.Size)
			}
		})
		if err == nil && IsPublicationID(inc.Publication) {
			inc.Pack.Key = IncrementKey(inc.Generation, inc.Publication)
		}
		if *dst == nil && max <= SegmentFanout {
			*dst = make([]Increment, 0, max) // as incrementsV4
		}
		*dst = append(*dst, inc)
		return err
	})
}

// Segment is a decoded segment object: a level-1 segment lists
// increments, a higher one the segments of the level below.
type Segment struct {
	Level       int
	First, Last uint64
	Increments  []Increment  // level 1
	Segments    []SegmentRef // level >= 2
}

// encodeSegment builds the segment of incs (level 1) or of children
// (level >= 2) and its descriptor, carried by carrier's pack unless
// carrier is the zero Increment. This build writes segments of version 3.
func encodeSegment(level int, incs []Increment, children []SegmentRef, carrier Increment) segmentBlob {
	var first, last, at uint64
	if level == 1 {
		first, last, at = incs[0].Generation, incs[len(incs)-1].Generation, incs[len(incs)-1].Time
	} else {
		first, last, at = children[0].First, children[len(children)-1].Last, children[len(children)-1].Time
	}
	b := make([]byte, 0, 128+340*len(incs)+160*len(children))
	b = strconv.AppendInt(append(b, `{"version":3,"level":`...), int64(level), 10)
	b = strconv.AppendUint(append(b, `,"first":`...), first, 10)
	b = strconv.AppendUint(append(b, `,"last":`...), last, 10)
	b = appendIncrementsV2(append(b, `,"increments":`...), incs)
	b = appendSegmentRefs(append(b, `,"segments":`...), children)
	b = append(b, "}\n"...)
	ref := SegmentRef{Level: level, First: first, Last: last, Time: at, Sum: segmentSum(b, carrier.Generation != 0), Size: int64(len(b)),
		Carrier: carrier.Generation, CarrierPub: carrier.Publication}
	return segmentBlob{ref: ref, data: b}
}

// segmentSum is a descriptor's checksum of segment bytes b: BLAKE3 of b
// for a segment of its own, the ID of the chunk object that holds b for a
// carried one (BLAKE3 of 0x01 and b).
func segmentSum(b []byte, carried bool) cas.ID {
	if !carried {
		return cas.Sum(b)
	}
	o, err := cas.ChunkObject(b)
	if err != nil {
		return cas.ID{} // larger than a chunk: refused by validation (MaxSegmentBytes)
	}
	return o.ID
}

// DecodeSegment strictly decodes the segment ref describes and checks it
// against ref: size, BLAKE3, level and range, and the rules of its level
// (level 1: 1..SegmentFanout increments in generation order, each parent
// the previous head; level n: 1..SegmentFanout segments of level n-1 in
// order). An error wraps ErrCorruptPack.
func DecodeSegment(ref SegmentRef, data []byte) (*Segment, error) {
	s, err := decodeSegment(ref, data)
	if err != nil {
		return nil, fmt.Errorf("remote: segment %s: %w: %w", ref.Key(), ErrCorruptPack, err)
	}
	return s, nil
}

func decodeSegment(ref SegmentRef, data []byte) (*Segment, error) {
	if int64(len(data)) != ref.Size {
		return nil, fmt.Errorf("%d bytes, the descriptor says %d", len(data), ref.Size)
	}
	if segmentSum(data, ref.Carried()) != ref.Sum {
		return nil, fmt.Errorf("BLAKE3 does not match the descriptor")
	}
	p := &parser{b: data}
	s := &Segment{}
	var level, version uint64
	err := p.object(segmentFields, func(field int) error {
		switch field {
		case 0:
			v, err := p.uint()
			if err == nil && v != 2 && v != 3 {
				err = fmt.Errorf("version %d", v)
			}
			version = v
			return err
		case 1:
			return p.uintTo(&level)
		case 2:
			return p.uintTo(&s.First)
		case 3:
			return p.uintTo(&s.Last)
		case 4:
			return p.incrementsV2(&s.Increments, SegmentFanout)
		default:
			return p.segmentRefs(&s.Segments, SegmentFanout)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	s.Level = int(min(level, MaxSegmentLevel+1))
	if s.Level != ref.Level || s.First != ref.First || s.Last != ref.Last {
		return nil, fmt.Errorf("level or range differs from the descriptor")
	}
	switch {
	case s.Level < 1 || s.Level > MaxSegmentLevel:
		return nil, fmt.Errorf("level %d is out of range", s.Level)
	case s.Level == 1 && (len(s.Increments) == 0 || len(s.Segments) != 0):
		return nil, fmt.Errorf("a level-1 segment lists increments only")
	case s.Level > 1 && (len(s.Segments) == 0 || len(s.Increments) != 0):
		return nil, fmt.Errorf("a level-%d segment lists segments only", s.Level)
	}
	for i, inc := range s.Increments {
		if err := validateIncrement(inc, nil); err != nil {
			return nil, fmt.Errorf("increment %d: %w", i, err)
		}
		if i > 0 && (inc.Generation <= s.Increments[i-1].Generation || inc.Parent != s.Increments[i-1].Head) {
			return nil, fmt.Errorf("increment %d does not follow the previous one", i)
		}
	}
	if n := len(s.Increments); n > 0 && (s.Increments[0].Generation != s.First || s.Increments[n-1].Generation != s.Last) {
		return nil, fmt.Errorf("the increments do not span the range")
	}
	for i, c := range s.Segments {
		if err := validateSegmentRef(c, int(version)); err != nil || c.Level != s.Level-1 {
			return nil, fmt.Errorf("segment %d: level %d or range is wrong", i, c.Level)
		}
		if i > 0 && c.First <= s.Segments[i-1].Last {
			return nil, fmt.Errorf("segment %d is out of order", i)
		}
	}
	if n := len(s.Segments); n > 0 && (s.Segments[0].First != s.First || s.Segments[n-1].Last != s.Last) {
		return nil, fmt.Errorf("the segments do not span the range")
	}
	return s, nil
}
