package pstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"unsafe"

	"github.com/slivingdoc/slivingdoc/cas"
)

// ErrCorrupt: a record of P cannot be trusted (torn, foreign or damaged).
// The text predates this package and is kept as it was.
var ErrCorrupt = errors.New("server: private state file is corrupt")

// frozenString returns b as a string without copying it: the paths of a
// state file are substrings of the bytes it was read into, instead of a
// copy of 1 MB at 10,000 files. b must never be written again (a state
// file's buffer is only decoded).
func frozenString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// reader decodes a checksummed state file; any overrun or trailing
// byte makes it invalid rather than partially read.
type reader struct {
	b   []byte
	bad bool
}

func newReader(data []byte, magic string) (*reader, error) {
	if len(data) < len(magic)+32 || string(data[:len(magic)]) != magic {
		return nil, ErrCorrupt
	}
	body := data[:len(data)-32]
	if sum := cas.Sum(body); !bytes.Equal(sum[:], data[len(data)-32:]) {
		return nil, ErrCorrupt
	}
	return &reader{b: body[len(magic):]}, nil
}

func (r *reader) bytes(n int) []byte {
	if r.bad || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}
func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}
func (r *reader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}
func (r *reader) ok() bool   { return !r.bad }
func (r *reader) done() bool { return !r.bad && len(r.b) == 0 }

// readSized reads the rest of f into a buffer of f's size, as
// os.ReadFile does: io.ReadAll grows from 512 bytes by doubling, which for
// a baseline of 700 KB (10,000 files) allocates, clears and copies about
// twice that in a process that reads it once.
func readSized(f *os.File) ([]byte, error) {
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<40 {
		size = int(fi.Size()) + 1 // one more byte to see EOF without growing
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // the file grew: room for more
		}
	}
}
