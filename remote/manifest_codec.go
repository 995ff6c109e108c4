package remote

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// The `current` encoding (docs/storage.md): compact JSON, fields in a fixed
// order, IDs as 64 lowercase hex characters (the zero ID as 64 zeros, never
// null or ""), one trailing newline. The encoder is the only writer, so the
// same manifest always yields the same bytes.

// EncodeManifest validates m and returns its canonical bytes (version 1,
// 2 or 3, as m.Version says).
func EncodeManifest(m *Manifest) ([]byte, error) {
	if err := m.refuseView(); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return encodeManifest(m), nil
}

// encodeManifest returns the canonical bytes of a manifest already
// validated: Extend and SwapCheckpoint validate what they return, so
// Publish and Checkpoint do not validate it a second time.
func encodeManifest(m *Manifest) []byte {
	if m.Version >= 2 {
		return encodeManifestV2(m)
	}
	b := make([]byte, 0, 256+300*len(m.Increments))
	b = append(b, `{"version":`...)
	b = strconv.AppendUint(b, 1, 10)
	b = append(b, `,"generation":`...)
	b = strconv.AppendUint(b, m.Generation, 10)
	b = appendID(append(b, `,"head":`...), m.Head)
	b = appendChain(append(b, ','), m.Active())
	b = append(b, `,"retained":[`...)
	for i, c := range m.Retained {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendChain(append(b, '{'), c)
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	return b
}

// appendChain writes `"checkpoint":{...},"increments":[...]`.
func appendChain(b []byte, c Chain) []byte {
	cp := c.Checkpoint
	b = appendString(append(b, `"checkpoint":{"key":`...), cp.Pack.Key)
	b = appendID(append(b, `,"blake3":`...), cp.Pack.Sum)
	b = strconv.AppendInt(append(b, `,"size":`...), cp.Pack.Size, 10)
	b = appendID(append(b, `,"head":`...), cp.Head)
	b = strconv.AppendUint(append(b, `,"through":`...), cp.Through, 10)
	b = appendString(append(b, `,"publication":`...), cp.Publication)
	b = append(b, `},"increments":[`...)
	for i, inc := range c.Increments {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(append(b, `{"generation":`...), inc.Generation, 10)
		b = appendString(append(b, `,"publication":`...), inc.Publication)
		b = appendID(append(b, `,"parent":`...), inc.Parent)
		b = appendID(append(b, `,"head":`...), inc.Head)
		b = appendString(append(b, `,"key":`...), inc.Pack.Key)
		b = appendID(append(b, `,"blake3":`...), inc.Pack.Sum)
		b = strconv.AppendInt(append(b, `,"size":`...), inc.Pack.Size, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendString quotes s; validation guarantees it holds no character JSON
// would escape (keys and publication IDs are restricted ASCII).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendID writes id as quoted lowercase hex, in place: id.String() would
// allocate a string per ID, three per increment.
func appendID(b []byte, id cas.ID) []byte {
	b = append(b, '"')
	b = hex.AppendEncode(b, id[:])
	return append(b, '"')
}

// DecodeManifest strictly decodes `current`, version 1, 2 or 3: malformed
// JSON, an unknown, duplicate, missing or null field, a number that is not
// a plain unsigned integer, a string with an escape or a character outside
// printable ASCII (no field value ever needs one), trailing data, version
// 0, more than MaxManifestBytes, or any broken Validate rule is an error
// wrapping ErrCorruptManifest. A version above 3 is a *FormatVersionError
// (ErrFormatNewer), naming it: a store a newer slivingdoc wrote. Fields may come in
// any order and with any JSON whitespace. Nothing is allocated from a
// count in the input.
func DecodeManifest(data []byte) (*Manifest, error) {
	m, err := decodeAnyManifest(data)
	if errors.Is(err, ErrFormatNewer) {
		return nil, err // the store is whole; this build is older than it
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptManifest, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// errVersion2 is what the version-1 decoder meets in a version-2
// manifest; DecodeManifest then decodes it as version 2.
var errVersion2 error = noinit.Error("version 2 is not supported by this build (reads version 1)")

// errVersion3 is the same for version 3, which the version-1 decoder
// refuses with its generic message.
var errVersion3 error = noinit.Error("version 3 is not supported by this build (reads version 1)")

// newestManifestVersion is the newest version of `current` this build
// decodes (DecodeManifest); a newer one is ErrFormatNewer, naming it.
const newestManifestVersion = 3

func decodeAnyManifest(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", len(data), MaxManifestBytes)
	}
	// The canonical encoding starts with the version; anything else
	// (reordered fields) costs one failed version-1 parse.
	if bytes.HasPrefix(data, []byte(`{"version":2,`)) || bytes.HasPrefix(data, []byte(`{"version":3,`)) {
		return decodeManifestV2(data)
	}
	m, err := decodeManifestV1(data)
	if errors.Is(err, errVersion2) || errors.Is(err, errVersion3) {
		return decodeManifestV2(data)
	}
	return m, err
}

// decodeManifestV1 is the version-1 decoder, unchanged since version 1
// shipped except that it names version 2 with a sentinel: it is what a
// version-1 binary runs, and refuses a version-2 manifest by naming the
// version.
func decodeManifestV1(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", len(data), MaxManifestBytes)
	}
	p := &parser{b: data}
	m := &Manifest{Version: 1}
	var active Chain
	err := p.object(manifestFields, func(field int) error {
		switch field {
		case 0:
			v, err := p.uint()
			switch {
			case err == nil && v == 2:
				err = errVersion2
			case err == nil && v == 3:
				err = errVersion3
			case err == nil && v > newestManifestVersion:
				err = &FormatVersionError{Version: v, Newest: newestManifestVersion}
			case err == nil && v != 1:
				err = fmt.Errorf("version %d is not supported by this build (reads version 1)", v)
			}
			return err
		case 1:
			return p.uintTo(&m.Generation)
		case 2:
			return p.idTo(&m.Head)
		case 3:
			return p.checkpoint(&active.Checkpoint)
		case 4:
			return p.increments(&active.Increments)
		default:
			return p.array(MaxRetained, func() error {
				var c Chain
				err := p.object(chainFields, func(field int) error {
					if field == 0 {
						return p.checkpoint(&c.Checkpoint)
					}
					return p.increments(&c.Increments)
				})
				m.Retained = append(m.Retained, c)
				return err
			})
		}
	})
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, fmt.Errorf("offset %d: data after the manifest object", p.i)
	}
	m.Checkpoint, m.Increments = active.Checkpoint, active.Increments
	return m, nil
}

// Field names per object, in encoding order.
var (
	manifestFields   = []string{"version", "generation", "head", "checkpoint", "increments", "retained"}
	chainFields      = []string{"checkpoint", "increments"}
	checkpointFields = []string{"key", "blake3", "size", "head", "through", "publication"}
	incrementFields  = []string{"generation", "publication", "parent", "head", "key", "blake3", "size"}
)

func (p *parser) checkpoint(cp *Checkpoint) error {
	return p.object(checkpointFields, func(field int) error {
		switch field {
		case 0:
			return p.stringTo(&cp.Pack.Key)
		case 1:
			return p.idTo(&cp.Pack.Sum)
		case 2:
			return p.sizeTo(&cp.Pack.Size)
		case 3:
			return p.idTo(&cp.Head)
		case 4:
			return p.uintTo(&cp.Through)
		default:
			return p.stringTo(&cp.Publication)
		}
	})
}

func (p *parser) increments(dst *[]Increment) error {
	return p.array(MaxIncrements, func() error {
		var inc Increment
		err := p.object(incrementFields, func(field int) error {
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
				return p.stringTo(&inc.Pack.Key)
			case 5:
				return p.idTo(&inc.Pack.Sum)
			default:
				return p.sizeTo(&inc.Pack.Size)
			}
		})
		*dst = append(*dst, inc)
		return err
	})
}

// parser is a strict scanner for the JSON subset the encoder writes plus
// insignificant whitespace. It is hand-written because `current` is read on
// every pull and commit: encoding/json's token API costs several
// milliseconds on a manifest of a few hundred increments.
type parser struct {
	b []byte
	i int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte without consuming it
// (0 at the end of input).
func (p *parser) next() byte {
	p.ws()
	if p.i == len(p.b) {
		return 0
	}
	return p.b[p.i]
}

func (p *parser) expect(c byte) error {
	if got := p.next(); got != c {
		return p.errorf("want %q, found %s", c, p.what())
	}
	p.i++
	return nil
}

// what describes the value starting at the current byte, for errors.
func (p *parser) what() string {
	if p.i >= len(p.b) {
		return "the end of the data"
	}
	switch c := p.b[p.i]; {
	case c == 'n':
		return "null"
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || '0' <= c && c <= '9':
		return "a number"
	default:
		return fmt.Sprintf("%q", c)
	}
}

// object reads one object whose fields are exactly names, in any order,
// calling field with each one's index.
func (p *parser) object(names []string, field func(int) error) error {
	return p.objectOpt(names, 0, field)
}

// objectOpt is object where the fields whose bit is set in optional may
// be absent.
func (p *parser) objectOpt(names []string, optional uint64, field func(int) error) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	var seen uint64 // len(names) <= 64
	if p.next() == '}' {
		p.i++
	} else {
		for {
			name, err := p.rawString()
			if err != nil {
				return err
			}
			idx := -1
			for j, n := range names {
				if n == string(name) { // no allocation: compiler-optimised comparison
					idx = j
					break
				}
			}
			switch {
			case idx < 0:
				return p.errorf("unknown field %q", name)
			case seen&(1<<idx) != 0:
				return p.errorf("duplicate field %q", name)
			}
			seen |= 1 << idx
			if err := p.expect(':'); err != nil {
				return err
			}
			p.ws()
			if err := field(idx); err != nil {
				return fmt.Errorf("%s: %w", names[idx], err)
			}
			c := p.next()
			p.i++
			if c == '}' {
				break
			}
			if c != ',' {
				p.i--
				return p.errorf("want ',' or '}', found %s", p.what())
			}
		}
	}
	for j, n := range names {
		if seen&(1<<j) == 0 && optional&(1<<j) == 0 {
			return p.errorf("missing field %q", n)
		}
	}
	return nil
}

// array reads one array of at most max elements.
func (p *parser) array(max int, elem func() error) error {
	if err := p.expect('['); err != nil {
		return err
	}
	if p.next() == ']' {
		p.i++
		return nil
	}
	for n := 0; ; n++ {
		if n == max {
			return p.errorf("more than %d elements", max)
		}
		if err := elem(); err != nil {
			return fmt.Errorf("element %d: %w", n, err)
		}
		c := p.next()
		p.i++
		if c == ']' {
			return nil
		}
		if c != ',' {
			p.i--
			return p.errorf("want ',' or ']', found %s", p.what())
		}
	}
}

// rawString reads a string of printable ASCII without escapes and returns
// its bytes (aliasing the input).
func (p *parser) rawString() ([]byte, error) {
	if p.next() != '"' {
		return nil, p.errorf("want a string, found %s", p.what())
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.b[start:j], nil
		case c == '\\' || c < 0x20 || c >= 0x7f:
			p.i = j
			return nil, p.errorf("escape or character outside printable ASCII in a string")
		}
	}
	p.i = len(p.b)
	return nil, p.errorf("unterminated string")
}

func (p *parser) stringTo(dst *string) error {
	s, err := p.rawString()
	if err != nil {
		return err
	}
	*dst = string(s)
	return nil
}

func (p *parser) idTo(dst *cas.ID) error {
	s, err := p.rawString()
	if err != nil {
		return err
	}
	if len(s) != 2*len(dst) {
		return errors.New("want 64 lowercase hex characters")
	}
	for k := range dst {
		hi, ok1 := unhex(s[2*k])
		lo, ok2 := unhex(s[2*k+1])
		if !ok1 || !ok2 {
			return errors.New("want 64 lowercase hex characters")
		}
		dst[k] = hi<<4 | lo
	}
	return nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// uint reads a JSON number that is a plain unsigned integer: digits only,
// no leading zero, no sign, fraction or exponent, at most 2^64-1.
func (p *parser) uint() (uint64, error) {
	start := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	digits := p.b[start:p.i]
	if len(digits) == 0 {
		p.i = start
		return 0, p.errorf("want an unsigned integer, found %s", p.what())
	}
	if p.i < len(p.b) {
		if c := p.b[p.i]; c == '.' || c == 'e' || c == 'E' {
			return 0, p.errorf("want an unsigned integer, found a fraction or exponent")
		}
	}
	if len(digits) > 1 && digits[0] == '0' {
		return 0, p.errorf("number with a leading zero")
	}
	v, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return 0, p.errorf("number out of range")
	}
	return v, nil
}

func (p *parser) uintTo(dst *uint64) (err error) {
	*dst, err = p.uint()
	return err
}

func (p *parser) sizeTo(dst *int64) error {
	v, err := p.uint()
	if err != nil {
		return err
	}
	if v > MaxPackSize {
		return fmt.Errorf("size %d is more than %d", v, int64(MaxPackSize))
	}
	*dst = int64(v)
	return nil
}
