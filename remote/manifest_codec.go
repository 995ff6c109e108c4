package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/slivingdoc/slivingdoc/cas"
)

// The `current` encoding (docs/storage.md): compact JSON, fields in a fixed
// order, IDs as 64 lowercase hex characters (the zero ID as 64 zeros, never
// null or ""), one trailing newline. The encoder is the only writer, so the
// same manifest always yields the same bytes.

// EncodeManifest validates m and returns its canonical bytes.
func EncodeManifest(m *Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 256+300*len(m.Increments))
	b = append(b, `{"version":`...)
	b = strconv.AppendUint(b, ManifestVersion, 10)
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
	return b, nil
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

func appendID(b []byte, id cas.ID) []byte { return appendString(b, id.String()) }

// DecodeManifest strictly decodes `current`: malformed JSON, an unknown,
// duplicate, missing or null field, a number that is not a plain unsigned
// integer, trailing data, a version other than 1, more than
// MaxManifestBytes, or any broken Validate rule is an error wrapping
// ErrCorruptManifest. Nothing is allocated from a count in the input.
func DecodeManifest(data []byte) (*Manifest, error) {
	m, err := decodeManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptManifest, err)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptManifest, err)
	}
	return m, nil
}

func decodeManifest(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", len(data), MaxManifestBytes)
	}
	d := &decoder{json.NewDecoder(bytes.NewReader(data))}
	d.UseNumber()
	m := &Manifest{}
	var chain Chain
	err := d.object([]string{"version", "generation", "head", "checkpoint", "increments", "retained"}, func(name string) error {
		switch name {
		case "version":
			v, err := d.uint()
			if err == nil && v != ManifestVersion {
				err = fmt.Errorf("version %d is not supported by this build (reads version %d)", v, ManifestVersion)
			}
			return err
		case "generation":
			return d.uintTo(&m.Generation)
		case "head":
			return d.idTo(&m.Head)
		case "checkpoint":
			return d.checkpoint(&chain.Checkpoint)
		case "increments":
			return d.increments(&chain.Increments)
		default: // retained
			return d.array(MaxRetained, func() error {
				var c Chain
				err := d.object([]string{"checkpoint", "increments"}, func(name string) error {
					if name == "checkpoint" {
						return d.checkpoint(&c.Checkpoint)
					}
					return d.increments(&c.Increments)
				})
				m.Retained = append(m.Retained, c)
				return err
			})
		}
	})
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the manifest object")
	}
	m.Checkpoint, m.Increments = chain.Checkpoint, chain.Increments
	return m, nil
}

type decoder struct{ *json.Decoder }

// object reads one JSON object whose fields are exactly names (any order),
// calling field for each.
func (d *decoder) object(names []string, field func(name string) error) error {
	if err := d.delim('{'); err != nil {
		return err
	}
	seen := make(map[string]bool, len(names))
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		known := false
		for _, n := range names {
			known = known || n == name
		}
		switch {
		case !known:
			return fmt.Errorf("unknown field %q", name)
		case seen[name]:
			return fmt.Errorf("duplicate field %q", name)
		}
		seen[name] = true
		if err := field(name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := d.delim('}'); err != nil {
		return err
	}
	for _, n := range names {
		if !seen[n] {
			return fmt.Errorf("missing field %q", n)
		}
	}
	return nil
}

// array reads one JSON array of at most max elements.
func (d *decoder) array(max int, elem func() error) error {
	if err := d.delim('['); err != nil {
		return err
	}
	for n := 0; d.More(); n++ {
		if n == max {
			return fmt.Errorf("more than %d elements", max)
		}
		if err := elem(); err != nil {
			return fmt.Errorf("element %d: %w", n, err)
		}
	}
	return d.delim(']')
}

func (d *decoder) delim(want json.Delim) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != want {
		return fmt.Errorf("want %q, found %s", want, describe(tok))
	}
	return nil
}

func describe(tok json.Token) string {
	switch tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		return fmt.Sprintf("%q", tok)
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "a value"
}

func (d *decoder) uint() (uint64, error) {
	tok, err := d.Token()
	if err != nil {
		return 0, err
	}
	n, ok := tok.(json.Number)
	if !ok {
		return 0, fmt.Errorf("want an unsigned integer, found %s", describe(tok))
	}
	v, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want an unsigned integer, found %q", string(n))
	}
	return v, nil
}

func (d *decoder) uintTo(dst *uint64) (err error) {
	*dst, err = d.uint()
	return err
}

func (d *decoder) sizeTo(dst *int64) error {
	v, err := d.uint()
	if err != nil {
		return err
	}
	if v > MaxPackSize {
		return fmt.Errorf("size %d is more than %d", v, int64(MaxPackSize))
	}
	*dst = int64(v)
	return nil
}

func (d *decoder) stringTo(dst *string) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	s, ok := tok.(string)
	if !ok {
		return fmt.Errorf("want a string, found %s", describe(tok))
	}
	*dst = s
	return nil
}

func (d *decoder) idTo(dst *cas.ID) error {
	var s string
	if err := d.stringTo(&s); err != nil {
		return err
	}
	id, err := cas.ParseID(s)
	if err != nil {
		return errors.New("want 64 lowercase hex characters")
	}
	*dst = id
	return nil
}

func (d *decoder) checkpoint(cp *Checkpoint) error {
	return d.object([]string{"key", "blake3", "size", "head", "through", "publication"}, func(name string) error {
		switch name {
		case "key":
			return d.stringTo(&cp.Pack.Key)
		case "blake3":
			return d.idTo(&cp.Pack.Sum)
		case "size":
			return d.sizeTo(&cp.Pack.Size)
		case "head":
			return d.idTo(&cp.Head)
		case "through":
			return d.uintTo(&cp.Through)
		default:
			return d.stringTo(&cp.Publication)
		}
	})
}

func (d *decoder) increments(dst *[]Increment) error {
	return d.array(MaxIncrements, func() error {
		var inc Increment
		err := d.object([]string{"generation", "publication", "parent", "head", "key", "blake3", "size"}, func(name string) error {
			switch name {
			case "generation":
				return d.uintTo(&inc.Generation)
			case "publication":
				return d.stringTo(&inc.Publication)
			case "parent":
				return d.idTo(&inc.Parent)
			case "head":
				return d.idTo(&inc.Head)
			case "key":
				return d.stringTo(&inc.Pack.Key)
			case "blake3":
				return d.idTo(&inc.Pack.Sum)
			default:
				return d.sizeTo(&inc.Pack.Size)
			}
		})
		*dst = append(*dst, inc)
		return err
	})
}
