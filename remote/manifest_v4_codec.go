package remote

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/slivingdoc/slivingdoc/cas"
)

// The version-4 encoding follows the rules of versions 1–3: compact JSON,
// fields in the fixed order below, IDs as 64 lowercase hex characters, one
// trailing newline, decoded by the same strict parser (unknown, duplicate,
// missing or null fields refused). Two additions:
//
//   - `recent` is one string of 22-character base64url IDs (each the 16
//     bytes of a UUIDv7, no padding), oldest first: 256 IDs cost 5,632
//     bytes instead of 9,984 as quoted UUIDs;
//   - `author` is the one field that is free text: UTF-8, with `"`, `\`
//     and control characters escaped (`\"`, `\\`, `\u00xx` in lowercase
//     hex) and nothing else; the decoder accepts only that form, so the
//     bytes stay canonical. An empty author (unknown) is written as no
//     field at all, and so is an absent group pack.
//
// Object fields, in order:
//
//	current    version generation head time store upgraded checkpoint
//	           checkpoints segments increments recent declined rollups
//	increment  generation publication parent head time proposal [author] [group]
//	group      blake3 size
//	declined   proposal publication by
//	rollup     level first blake3 size
//	segment    version level first last increments segments   (index/ objects)

var (
	manifestV4Fields  = []string{"version", "generation", "head", "time", "store", "upgraded", "checkpoint", "checkpoints", "segments", "increments", "recent", "declined", "rollups"}
	incrementV4Fields = []string{"generation", "publication", "parent", "head", "time", "proposal", "author", "group"}
	groupFields       = []string{"blake3", "size"}
	declinedFields    = []string{"proposal", "publication", "by"}
	rollupFields      = []string{"level", "first", "blake3", "size"}
)

// optional fields of incrementV4Fields: author, group.
const optionalIncrementV4 = 1<<6 | 1<<7

// EncodeManifestV4 validates m and returns its canonical bytes.
func EncodeManifestV4(m *ManifestV4) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return appendManifestV4(make([]byte, 0, encodedSizeV4(m)), m), nil
}

// encodedSizeV4 is a capacity that holds m's encoding in one allocation.
func encodedSizeV4(m *ManifestV4) int {
	return 1024 + 400*len(m.Increments) + 160*len(m.Segments) + recentIDLen*len(m.Recent) + 100*len(m.Declined)
}

// appendManifestV4 appends the canonical bytes of m, which the caller
// has validated.
func appendManifestV4(b []byte, m *ManifestV4) []byte {
	b = append(b, `{"version":4,"generation":`...)
	b = strconv.AppendUint(b, m.Generation, 10)
	b = appendID(append(b, `,"head":`...), m.Head)
	b = strconv.AppendUint(append(b, `,"time":`...), m.Time, 10)
	b = appendString(append(b, `,"store":`...), m.Store)
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
	b = appendIncrementsV4(append(b, `,"increments":`...), m.Increments)
	b = append(encodeRecent(append(b, `,"recent":"`...), m.Recent), '"')
	b = append(b, `,"declined":[`...)
	for i, d := range m.Declined {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(append(b, `{"proposal":`...), d.Proposal, 10)
		b = appendString(append(b, `,"publication":`...), d.Publication)
		b = strconv.AppendUint(append(b, `,"by":`...), d.By, 10)
		b = append(b, '}')
	}
	b = append(b, `],"rollups":[`...)
	for i, r := range m.Rollups {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `{"level":`...), int64(r.Level), 10)
		b = strconv.AppendUint(append(b, `,"first":`...), r.First, 10)
		b = appendID(append(b, `,"blake3":`...), r.Sum)
		b = strconv.AppendInt(append(b, `,"size":`...), r.Size, 10)
		b = append(b, '}')
	}
	return append(b, "]}\n"...)
}

func appendIncrementsV4(b []byte, incs []IncrementV4) []byte {
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
		b = strconv.AppendUint(append(b, `,"proposal":`...), inc.Proposal, 10)
		if inc.Author != "" {
			b = appendUTF8(append(b, `,"author":`...), inc.Author)
		}
		if inc.Group != (GroupRef{}) {
			b = appendID(append(b, `,"group":{"blake3":`...), inc.Group.Sum)
			b = strconv.AppendInt(append(b, `,"size":`...), inc.Group.Size, 10)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendUTF8 quotes s (valid UTF-8) in the canonical escaped form.
func appendUTF8(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// utf8To reads a string in appendUTF8's form, at most max bytes decoded.
func (p *parser) utf8To(dst *string, max int) error {
	if p.next() != '"' {
		return p.errorf("want a string, found %s", p.what())
	}
	p.i++
	var out []byte
	for {
		if p.i >= len(p.b) {
			return p.errorf("unterminated string")
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(out) {
				return p.errorf("a string that is not UTF-8")
			}
			if len(out) > max {
				return p.errorf("a string of more than %d bytes", max)
			}
			*dst = string(out)
			return nil
		case c < 0x20:
			return p.errorf("a control character not escaped")
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return p.errorf("unterminated escape")
		}
		switch e := p.b[p.i+1]; e {
		case '"', '\\':
			out = append(out, e)
			p.i += 2
		case 'u':
			if p.i+6 > len(p.b) || p.b[p.i+2] != '0' || p.b[p.i+3] != '0' {
				return p.errorf("an escape other than a control character")
			}
			hi, ok1 := unhex(p.b[p.i+4])
			lo, ok2 := unhex(p.b[p.i+5])
			if !ok1 || !ok2 || hi > 1 {
				return p.errorf("an escape other than a control character")
			}
			out = append(out, hi<<4|lo)
			p.i += 6
		default:
			return p.errorf("an escape other than \\\" \\\\ \\u00xx")
		}
		if len(out) > max {
			return p.errorf("a string of more than %d bytes", max)
		}
	}
}

// DecodeManifestV4 strictly decodes a version-4 `current` and validates
// it. An error wraps ErrCorruptManifest; a `current` of another version
// is refused with its version in the message. Only the canonical bytes
// (what EncodeManifestV4 writes) are accepted, as for proposals: a
// version-4 `current` has one encoding, so it always starts
// `{"version":4,` and ManifestVersionOf names its version.
func DecodeManifestV4(data []byte) (*ManifestV4, error) {
	m, err := decodeManifestV4(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptManifest, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	// Canonical means what EncodeManifestV4 writes for m: m's encoding,
	// made in a reused buffer (validated once, no copy kept), is data.
	buf := canonicalBufs.Get().(*[]byte)
	again := appendManifestV4((*buf)[:0], m)
	same := bytes.Equal(again, data)
	if cap(again) <= MaxManifestV4Bytes+1024 {
		*buf = again
		canonicalBufs.Put(buf)
	}
	if !same {
		return nil, fmt.Errorf("%w: version 4: not in canonical form", ErrCorruptManifest)
	}
	return m, nil
}

// canonicalBufs holds the buffers DecodeManifestV4 encodes into to
// compare: `current` is decoded on every commit and pull, and its
// encoding (up to MaxManifestV4Bytes) need not be garbage each time.
var canonicalBufs = sync.Pool{New: func() any { return new([]byte) }}

// ManifestVersionOf returns the version field of an encoded `current`
// when it comes first, as in every canonical encoding; 0 otherwise. A
// version-4 `current` is canonical or corrupt (DecodeManifestV4), so 4
// here is exact; versions 1–3 may be written in any field order (their
// decoder accepts it), so anything else goes to DecodeCurrent, which
// reads their version wherever it is.
func ManifestVersionOf(data []byte) int {
	rest, ok := bytes.CutPrefix(data, []byte(`{"version":`))
	if !ok {
		return 0
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' || n > 1000 {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func decodeManifestV4(data []byte) (*ManifestV4, error) {
	if len(data) > MaxManifestV4Bytes {
		return nil, fmt.Errorf("%d bytes, more than %d", len(data), MaxManifestV4Bytes)
	}
	p := &parser{b: data}
	m := &ManifestV4{}
	err := p.object(manifestV4Fields, func(field int) error {
		switch field {
		case 0:
			v, err := p.uint()
			if err == nil && v != ManifestV4Version {
				err = fmt.Errorf("version %d is not version 4", v)
			}
			return err
		case 1:
			return p.uintTo(&m.Generation)
		case 2:
			return p.idTo(&m.Head)
		case 3:
			return p.uintTo(&m.Time)
		case 4:
			return p.stringTo(&m.Store)
		case 5:
			return p.uintTo(&m.Upgraded)
		case 6:
			return p.checkpoint(&m.Checkpoint)
		case 7:
			return p.array(MaxRetained, func() error {
				var cp Checkpoint
				err := p.checkpoint(&cp)
				m.Checkpoints = append(m.Checkpoints, cp)
				return err
			})
		case 8:
			return p.segmentRefs(&m.Segments, MaxSegments)
		case 9:
			return p.incrementsV4(&m.Increments, MaxTail)
		case 10:
			s, err := p.rawString()
			if err != nil {
				return err
			}
			m.Recent, err = decodeRecent(s)
			return err
		case 11:
			return p.array(MaxDeclined, func() error {
				var d Declined
				err := p.object(declinedFields, func(f int) error {
					switch f {
					case 0:
						return p.uintTo(&d.Proposal)
					case 1:
						return p.stringTo(&d.Publication)
					default:
						return p.uintTo(&d.By)
					}
				})
				m.Declined = append(m.Declined, d)
				return err
			})
		default:
			return p.array(MaxRollupsV4, func() error {
				var r RollupRef
				err := p.object(rollupFields, func(f int) error {
					switch f {
					case 0:
						v, err := p.uint()
						r.Level = int(min(v, 1<<20))
						return err
					case 1:
						return p.uintTo(&r.First)
					case 2:
						return p.idTo(&r.Sum)
					default:
						return p.sizeTo(&r.Size)
					}
				})
				m.Rollups = append(m.Rollups, r)
				return err
			})
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

func (p *parser) incrementsV4(dst *[]IncrementV4, max int) error {
	return p.array(max, func() error {
		var inc IncrementV4
		err := p.objectOpt(incrementV4Fields, optionalIncrementV4, func(field int) error {
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
				return p.uintTo(&inc.Proposal)
			case 6:
				err := p.utf8To(&inc.Author, MaxAuthorBytes)
				if err == nil && inc.Author == "" {
					err = fmt.Errorf("an empty author is written as no field")
				}
				return err
			default:
				err := p.object(groupFields, func(f int) error {
					if f == 0 {
						return p.idTo(&inc.Group.Sum)
					}
					return p.sizeTo(&inc.Group.Size)
				})
				if err == nil && inc.Group == (GroupRef{}) {
					err = fmt.Errorf("an absent group pack is written as no field")
				}
				return err
			}
		})
		if *dst == nil && max <= SegmentFanout {
			// A segment's few: room for them at once, not grown four
			// times (a listing of the history decodes over a thousand
			// segments).
			*dst = make([]IncrementV4, 0, max)
		}
		*dst = append(*dst, inc)
		return err
	})
}

// SegmentV4 is a decoded version-4 segment object.
type SegmentV4 struct {
	Level       int
	First, Last uint64
	Increments  []IncrementV4 // level 1
	Segments    []SegmentRef  // level >= 2
}

// encodeSegmentV4 builds the segment of incs (level 1) or of children
// (level >= 2), an object of its own under index/, and its descriptor.
func encodeSegmentV4(level int, incs []IncrementV4, children []SegmentRef) (SegmentRef, []byte) {
	var first, last, at uint64
	if level == 1 {
		first, last, at = incs[0].Generation, incs[len(incs)-1].Generation, incs[len(incs)-1].Time
	} else {
		first, last, at = children[0].First, children[len(children)-1].Last, children[len(children)-1].Time
	}
	b := make([]byte, 0, 128+400*len(incs)+160*len(children))
	b = strconv.AppendInt(append(b, `{"version":4,"level":`...), int64(level), 10)
	b = strconv.AppendUint(append(b, `,"first":`...), first, 10)
	b = strconv.AppendUint(append(b, `,"last":`...), last, 10)
	b = appendIncrementsV4(append(b, `,"increments":`...), incs)
	b = appendSegmentRefs(append(b, `,"segments":`...), children)
	b = append(b, "}\n"...)
	return SegmentRef{Level: level, First: first, Last: last, Time: at, Sum: cas.Sum(b), Size: int64(len(b))}, b
}

// DecodeSegmentV4 strictly decodes the version-4 segment ref describes and
// checks it against ref (size, BLAKE3, level, range) and the rules of its
// level. An error wraps ErrCorruptPack.
func DecodeSegmentV4(ref SegmentRef, data []byte) (*SegmentV4, error) {
	s, err := decodeSegmentV4(ref, data)
	if err != nil {
		return nil, fmt.Errorf("remote: segment %s: %w: %w", ref.Key(), ErrCorruptPack, err)
	}
	return s, nil
}

func decodeSegmentV4(ref SegmentRef, data []byte) (*SegmentV4, error) {
	if int64(len(data)) != ref.Size || ref.Carried() || cas.Sum(data) != ref.Sum {
		return nil, fmt.Errorf("size or BLAKE3 does not match the descriptor")
	}
	p := &parser{b: data}
	s := &SegmentV4{}
	var level uint64
	err := p.object(segmentFields, func(field int) error {
		switch field {
		case 0:
			v, err := p.uint()
			if err == nil && v != ManifestV4Version {
				err = fmt.Errorf("version %d", v)
			}
			return err
		case 1:
			return p.uintTo(&level)
		case 2:
			return p.uintTo(&s.First)
		case 3:
			return p.uintTo(&s.Last)
		case 4:
			return p.incrementsV4(&s.Increments, SegmentFanout)
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
		if err := validateIncrementV4(inc); err != nil {
			return nil, fmt.Errorf("increment %d: %w", i, err)
		}
		if i > 0 && (inc.Generation != s.Increments[i-1].Generation+1 || inc.Parent != s.Increments[i-1].Head) {
			return nil, fmt.Errorf("increment %d does not follow the previous one", i)
		}
	}
	if n := len(s.Increments); n > 0 && (s.Increments[0].Generation != s.First || s.Increments[n-1].Generation != s.Last) {
		return nil, fmt.Errorf("the increments do not span the range")
	}
	// Children of a level-n segment may be segments of versions 2 and 3
	// (carried ones too) when a fold after an upgrade merged them with
	// version-4 ones; their ranges may leave out a generation between
	// them (a version-3 checkpoint swap named no increment).
	for i, c := range s.Segments {
		if err := validateSegmentRef(c, 3); err != nil || c.Level != s.Level-1 {
			return nil, fmt.Errorf("segment %d: level %d or range is wrong", i, c.Level)
		}
		if i > 0 && c.First <= s.Segments[i-1].Last {
			return nil, fmt.Errorf("segment %d does not follow the previous one", i)
		}
	}
	if n := len(s.Segments); n > 0 && (s.Segments[0].First != s.First || s.Segments[n-1].Last != s.Last) {
		return nil, fmt.Errorf("the segments do not span the range")
	}
	return s, nil
}
