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
	depth   map[ID]int      // trees put as deltas: the deltas a reader applies to rebuild each
	based   map[ID]struct{} // the bases of the deltas put so far
	done    []byte          // the finished pack
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
	enc, stored := wholeRecord(obj)
	w.add(obj, enc, stored)
	return nil
}

// wholeRecord returns the encoding and stored bytes of obj stored whole.
func wholeRecord(obj Object) (byte, []byte) {
	if len(obj.Body) >= compressMin {
		z := zstdEncoders().compress(obj.Body)
		if len(z) <= len(obj.Body)-len(obj.Body)/8 {
			return encodingZstd, z
		}
	}
	return encodingRaw, obj.Body
}

// PutDelta adds obj, a tree, stored as its change from base, another tree,
// when that is smaller than storing it whole (docs/format.md 4.8); the pack
// is then version 2, which readers older than this package refuse. The
// base must be where every reader of the pack will hold it: in this pack,
// or in what each reader already has (for an increment, its parent's
// trees). baseDepth is the number of deltas a reader applies to rebuild
// base, as GetDepth reports it from the writer's store; for a base in this
// pack the writer knows it and baseDepth is ignored. obj is stored whole,
// as Put does, when the delta is not smaller, when base is already
// WriteDeltaDepth deltas deep, or when obj is not a tree. Put and PutDelta
// may be mixed.
func (w *PackWriter) PutDelta(obj, base Object, baseDepth int) error {
	if w.done != nil {
		return errors.New("cas: Put on a finished pack")
	}
	if _, ok := w.seen[obj.ID]; ok {
		return nil
	}
	if obj.Kind != KindTree || obj.ID == base.ID {
		return w.Put(obj)
	}
	if err := obj.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidObject, err)
	}
	if err := base.check(); err != nil || base.Kind != KindTree {
		return fmt.Errorf("%w: delta base %v: not a valid tree (%v)", ErrInvalidObject, base.ID, err)
	}
	if w.Has(base.ID) {
		baseDepth = w.depth[base.ID]
	}
	// A tree that is already another delta's base is stored whole: as a
	// delta it could close a cycle (a delta against b, then b against a).
	_, isBase := w.based[obj.ID]
	if baseDepth >= WriteDeltaDepth || isBase {
		enc, stored := wholeRecord(obj)
		w.add(obj, enc, stored)
		return nil
	}
	delta, err := encodeDelta(obj, base)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidObject, err)
	}
	// A delta of at most a sixteenth of the body is taken without
	// compressing the whole tree to compare: a tree's entries are mostly
	// IDs, digests that do not compress, so its whole record is larger,
	// and compressing a large directory's tree was most of what storing a
	// one-line change's trees cost.
	if len(delta)*deltaTakenRatio > len(obj.Body) {
		if enc, stored := wholeRecord(obj); len(delta) >= len(stored) {
			w.add(obj, enc, stored)
			return nil
		}
	}
	if w.depth == nil {
		w.depth, w.based = make(map[ID]int), make(map[ID]struct{})
	}
	w.depth[obj.ID] = baseDepth + 1
	w.based[base.ID] = struct{}{}
	w.add(obj, encodingDelta, delta)
	return nil
}

// deltaTakenRatio: PutDelta stores a delta at most 1/deltaTakenRatio of
// the tree's body without comparing it with the whole record.
const deltaTakenRatio = 16

// add appends the record of obj, stored as enc.
func (w *PackWriter) add(obj Object, enc byte, stored []byte) {
	off := uint64(len(w.buf))
	w.buf = append(w.buf, byte(obj.Kind), enc)
	w.buf = append(w.buf, obj.ID[:]...)
	w.buf = le.AppendUint32(w.buf, uint32(len(obj.Body)))
	w.buf = le.AppendUint32(w.buf, uint32(len(stored)))
	w.buf = append(w.buf, stored...)
	w.entries = append(w.entries, indexEntry{id: obj.ID, offset: off, stored: uint32(len(stored))})
	w.seen[obj.ID] = struct{}{}
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
	if len(w.depth) > 0 {
		le.PutUint32(w.buf[8:], PackVersionDeltas)
	}
	le.PutUint64(w.buf[16:], uint64(len(w.buf)+32))
	sum := Sum(w.buf)
	w.buf = append(w.buf, sum[:]...)
	w.done, w.buf = w.buf, nil
	return w.done, nil
}

// Pack is a verified, opened pack held in memory.
type Pack struct {
	data    []byte
	index   []byte // the index region of data
	version uint32
	bases   Source // where the bases of tree deltas not in the pack are; nil: nowhere
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
	return &Pack{data: data, index: index, version: le.Uint32(data[8:])}, nil
}

// Version returns the pack's format version: PackVersion, or
// PackVersionDeltas for a pack that may hold trees stored as deltas.
func (p *Pack) Version() int { return int(p.version) }

// WithBases returns the pack reading the bases of its tree deltas that it
// does not hold from src (the objects a reader already has, for example
// its Store). Without it such a tree is ErrMissingBase. The two share the
// pack's bytes.
func (p *Pack) WithBases(src Source) *Pack {
	q := *p
	q.bases = src
	return &q
}

// Bases returns the IDs, sorted, of the trees that the pack's deltas are
// stored against and that it does not hold: what a reader must hold
// before it can read or verify the pack (none for a version-1 pack).
func (p *Pack) Bases() []ID {
	if p.version != PackVersionDeltas {
		return nil
	}
	var out []ID
	for i := range p.Len() {
		e := readIndexEntry(p.index[i*indexEntrySize:])
		rec := p.data[e.offset : e.offset+recordHeader+uint64(e.stored)]
		if rec[1] != encodingDelta || e.stored < 32 {
			continue
		}
		if base := ID(rec[recordHeader : recordHeader+32]); !p.has(base) {
			out = append(out, base)
		}
	}
	slices.SortFunc(out, func(a, b ID) int { return bytes.Compare(a[:], b[:]) })
	return slices.Compact(out)
}

func (p *Pack) has(id ID) bool {
	_, ok := p.find(id)
	return ok
}

// record returns the record of the entry e; checkIndex proved every
// record lies inside the pack.
func (p *Pack) record(e indexEntry) (record, error) {
	return parseRecord(p.data[e.offset:e.offset+recordHeader+uint64(e.stored)], e, p.version == PackVersionDeltas)
}

// getDepth is Get for depthSource: a base of the pack's deltas is looked
// for in the pack first, then in p.bases.
func (p *Pack) getDepth(id ID, budget int) (Object, int, error) {
	e, ok := p.find(id)
	if !ok {
		return getBase(p.bases, id, budget)
	}
	r, err := p.record(e)
	if err != nil {
		return Object{}, 0, err
	}
	return r.resolve(budget, p.getDepth)
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
	r, err := p.record(e)
	if err != nil {
		return Object{}, err
	}
	o, _, err := r.resolve(MaxDeltaDepth, p.getDepth)
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
// the rules of its kind. OpenPack checked everything else. A tree stored
// as a delta is rebuilt, so its base must be at hand (WithBases):
// otherwise ErrMissingBase.
func (p *Pack) Verify() error {
	for i := range p.Len() {
		e := readIndexEntry(p.index[i*indexEntrySize:])
		r, err := p.record(e)
		if err != nil {
			return err
		}
		o, _, err := r.resolve(MaxDeltaDepth, p.getDepth)
		if err != nil {
			return err
		}
		if err := checkBody(o.Kind, o.Body); err != nil {
			return err
		}
	}
	return nil
}
