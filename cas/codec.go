package cas

import "encoding/binary"

// All integers in objects and packs are little-endian and fixed-width, so
// every value has exactly one encoding (no varint with redundant forms).
var le = binary.LittleEndian

// reader consumes a canonical encoding. The first failure sticks: callers
// read every field and check r.err (or r.done) once, which keeps decoders
// short and makes a short read impossible to ignore.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = corruptf("%s: need %d bytes, %d left", what, n, len(r.b))
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u8(what string) uint8 {
	if p := r.take(1, what); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u16(what string) uint16 {
	if p := r.take(2, what); p != nil {
		return le.Uint16(p)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if p := r.take(4, what); p != nil {
		return le.Uint32(p)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if p := r.take(8, what); p != nil {
		return le.Uint64(p)
	}
	return 0
}

func (r *reader) id(what string) (id ID) {
	if p := r.take(len(id), what); p != nil {
		copy(id[:], p)
	}
	return id
}

// done returns the first failure, or an error if bytes are left over.
func (r *reader) done(what string) error {
	if r.err == nil && len(r.b) != 0 {
		r.err = corruptf("%s: %d trailing bytes", what, len(r.b))
	}
	return r.err
}
