package cas

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// PackWriter accumulates objects for one pack in memory. It is a Sink,
// not safe for concurrent use. Objects are laid out in the order they are
// first put (a file's chunks stay together); the index is sorted at Finish.
type PackWriter struct {
	buf     []byte
	entries []indexEntry
	seen    map[ID]struct{}
	done    []byte // the finished pack
}

// NewPackWriter returns an empty PackWriter.
func NewPackWriter() *PackWriter {
	w := &PackWriter{buf: make([]byte, packHeaderSize, 64<<10), seen: make(map[ID]struct{})}
	copy(w.buf, packMagic)
	le.PutUint32(w.buf[8:], PackVersion)
	return w
}

// Put adds obj unless the pack already holds it. It verifies the object
// first (ID, kind tag, canonical structure), so that a pack never carries
// an object a reader would refuse.
func (w *PackWriter) Put(obj Object) error {
	if w.done != nil {
		return errors.New("cas: Put on a finished pack")
	}
	if _, ok := w.seen[obj.ID]; ok {
		return nil
	}
	if err := obj.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidObject, err)
	}
	enc, stored := byte(encodingRaw), obj.Body
	if len(obj.Body) >= compressMin {
		z := zstdEncoders().compress(obj.Body)
		if len(z) <= len(obj.Body)-len(obj.Body)/8 {
			enc, stored = encodingZstd, z
		}
	}
	off := uint64(len(w.buf))
	w.buf = append(w.buf, byte(obj.Kind), enc)
	w.buf = append(w.buf, obj.ID[:]...)
	w.buf = le.AppendUint32(w.buf, uint32(len(obj.Body)))
	w.buf = le.AppendUint32(w.buf, uint32(len(stored)))
	w.buf = append(w.buf, stored...)
	w.entries = append(w.entries, indexEntry{id: obj.ID, offset: off, stored: uint32(len(stored))})
	w.seen[obj.ID] = struct{}{}
	return nil
}

// Has reports whether the pack already holds id.
func (w *PackWriter) Has(id ID) bool {
	_, ok := w.seen[id]
	return ok
}

// Len returns the number of distinct objects put so far.
func (w *PackWriter) Len() int { return len(w.entries) }

// Finish completes the pack and returns its bytes; later calls return the
// same bytes and Put fails. A pack without objects is ErrEmptyPack.
func (w *PackWriter) Finish() ([]byte, error) {
	if w.done != nil {
		return w.done, nil
	}
	if len(w.entries) == 0 {
		return nil, ErrEmptyPack
	}
	slices.SortFunc(w.entries, func(a, b indexEntry) int { return bytes.Compare(a.id[:], b.id[:]) })
	indexOff := uint64(len(w.buf))
	for _, e := range w.entries {
		w.buf = append(w.buf, e.id[:]...)
		w.buf = le.AppendUint64(w.buf, e.offset)
		w.buf = le.AppendUint32(w.buf, e.stored)
	}
	w.buf = le.AppendUint64(w.buf, indexOff)
	w.buf = le.AppendUint32(w.buf, uint32(len(w.entries)))
	w.buf = le.AppendUint32(w.buf, 0)
	le.PutUint64(w.buf[16:], uint64(len(w.buf)+32))
	sum := Sum(w.buf)
	w.buf = append(w.buf, sum[:]...)
	w.done, w.buf = w.buf, nil
	return w.done, nil
}

// Pack is a verified, opened pack held in memory.
type Pack struct {
	data  []byte
	index []byte // the index region of data
}

// OpenPack verifies the trailer checksum and the index and returns the pack.
// Every object's ID is verified again when it is decoded by Get. A short
// pack is ErrTruncated, an unknown version ErrUnsupportedVersion; both are
// ErrCorrupt, like every other failure. The Pack reads data in place: the
// caller must not modify it afterwards.
func OpenPack(data []byte) (*Pack, error) {
	size := int64(len(data))
	if err := checkHeader(data, size); err != nil {
		return nil, err
	}
	if Sum(data[:size-32]) != ID(data[size-32:]) {
		return nil, corruptf("pack checksum mismatch")
	}
	indexOff, count, err := checkTrailer(data[size-packTrailerSize:], size)
	if err != nil {
		return nil, err
	}
	index := data[indexOff : indexOff+uint64(count)*indexEntrySize]
	if err := checkIndex(index, indexOff); err != nil {
		return nil, err
	}
	return &Pack{data: data, index: index}, nil
}

// Len returns the number of objects in the pack.
func (p *Pack) Len() int { return len(p.index) / indexEntrySize }

// find returns the index entry of id.
func (p *Pack) find(id ID) (indexEntry, bool) {
	i, ok := searchID(p.index, indexEntrySize, id)
	if !ok {
		return indexEntry{}, false
	}
	return readIndexEntry(p.index[i*indexEntrySize:]), true
}

// Get returns the object id, verified against its ID. The body is a copy:
// callers may keep or modify it.
func (p *Pack) Get(id ID) (Object, error) {
	e, ok := p.find(id)
	if !ok {
		return Object{}, ErrNotFound
	}
	// checkIndex proved every record lies inside the pack.
	o, err := decodeRecord(p.data[e.offset:e.offset+recordHeader+uint64(e.stored)], e)
	if err != nil {
		return Object{}, err
	}
	if len(o.Body) > 0 && &o.Body[0] == &p.data[e.offset+recordHeader] {
		o.Body = bytes.Clone(o.Body)
	}
	return o, nil
}

// IDs returns the IDs of the pack's objects in increasing order.
func (p *Pack) IDs() []ID {
	ids := make([]ID, p.Len())
	for i := range ids {
		copy(ids[i][:], p.index[i*indexEntrySize:])
	}
	return ids
}

// Verify decodes every object of the pack, checking each against its ID and
// the rules of its kind. OpenPack checked everything else.
func (p *Pack) Verify() error {
	for i := range p.Len() {
		e := readIndexEntry(p.index[i*indexEntrySize:])
		o, err := decodeRecord(p.data[e.offset:e.offset+recordHeader+uint64(e.stored)], e)
		if err != nil {
			return err
		}
		if err := checkBody(o.Kind, o.Body); err != nil {
			return err
		}
	}
	return nil
}
