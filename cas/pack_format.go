package cas

import (
	"bytes"
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// Pack layout, format versions 1 and 2 (docs/format.md, "Packs"):
//
//	header   magic "SLVDPACK" | version u32 | flags u32 (0) | pack length u64
//	records  kind u8 | encoding u8 | ID [32] | body length u32 | stored length u32 | stored bytes
//	index    per object, sorted by ID: ID [32] | record offset u64 | stored length u32
//	trailer  index offset u64 | object count u32 | flags u32 (0) | BLAKE3-256 of all preceding bytes
//
// Version 2 differs only in that a record may be a tree delta (delta.go).
const (
	packMagic = "SLVDPACK"
	// PackVersion is the version of a pack without tree deltas, the only
	// one NewPackWriter's Put writes.
	PackVersion = 1
	// PackVersionDeltas is the version of a pack that holds at least one
	// tree stored as a delta (PutDelta): a reader that predates it
	// refuses the whole pack by its version instead of misreading it.
	PackVersionDeltas = 2

	packHeaderSize  = 8 + 4 + 4 + 8
	recordHeader    = 1 + 1 + 32 + 4 + 4
	indexEntrySize  = 32 + 8 + 4
	packTrailerSize = 8 + 4 + 4 + 32
	packMinSize     = packHeaderSize + recordHeader + 2 + indexEntrySize + packTrailerSize
)

// Record encodings.
const (
	encodingRaw   = 0
	encodingZstd  = 1
	encodingDelta = 2 // version 2 only
)

// Compression policy: bodies shorter than compressMin are stored raw (a
// zstd frame costs more than it can save), and a compressed body is kept
// only when it is at most 7/8 of the raw size.
const compressMin = 64

// The fastest level: a commit runs in a short process that compresses a
// few small objects, and the default level's larger tables cost 1 ms of
// CPU there (allocation and page faults) against 0.3 ms, for output ~7%
// larger on notes. Any level decodes the same; the format does not change.
func newZstdEncoder() *zstd.Encoder {
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), // every body is checked against its ID
		zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err) // only invalid options fail, and these are constants
	}
	return e
}

// zstdEncoders lends single-stream encoders, made on first need, at most
// one per CPU: a CLI process that compresses from one goroutine makes one
// (as before), while a process running many engines (serve's background
// work, the fleet simulation) compresses on every core instead of queueing
// every EncodeAll of the process on one encoder. Encoding is pure CPU, so
// more encoders than CPUs would only add memory (~300 KB each).
func zstdEncoders() *encoderPool {
	return zstdEncoderPool.Get(func() *encoderPool {
		n := runtime.GOMAXPROCS(0)
		return &encoderPool{free: make(chan *zstd.Encoder, n), limit: int64(n)}
	})
}

var zstdEncoderPool noinit.Lazy[*encoderPool]

type encoderPool struct {
	free  chan *zstd.Encoder
	made  atomic.Int64
	limit int64
}

// compress returns body as one zstd frame.
func (p *encoderPool) compress(body []byte) []byte {
	var e *zstd.Encoder
	select {
	case e = <-p.free:
	default:
		if p.made.Add(1) <= p.limit {
			e = newZstdEncoder()
		} else {
			e = <-p.free
		}
	}
	defer func() { p.free <- e }()
	return e.EncodeAll(body, nil)
}

// zstdRoom is the spare capacity given to the decoder's output (see
// record.whole).
const zstdRoom = 64

// zstdDecoder is the process's decoder, made on first use.
func zstdDecoder() *zstd.Decoder { return zstdDecoderOnce.Get(newZstdDecoder) }

var zstdDecoderOnce noinit.Lazy[*zstd.Decoder]

func newZstdDecoder() *zstd.Decoder {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderMaxMemory(MaxObjectSize),
		// Output never grows beyond the declared body length.
		zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(err)
	}
	return d
}

// indexEntry is one decoded index entry.
type indexEntry struct {
	id     ID
	offset uint64
	stored uint32
}

func readIndexEntry(b []byte) indexEntry {
	var e indexEntry
	copy(e.id[:], b)
	e.offset = le.Uint64(b[32:])
	e.stored = le.Uint32(b[40:])
	return e
}

// searchID finds id in records of size bytes each, sorted by the ID
// each starts with (a pack's index, the merged index), and returns its
// position.
func searchID(records []byte, size int, id ID) (int, bool) {
	n := len(records) / size
	i := sort.Search(n, func(i int) bool {
		return bytes.Compare(records[i*size:i*size+len(id)], id[:]) >= 0
	})
	return i, i < n && bytes.Equal(records[i*size:i*size+len(id)], id[:])
}

// checkHeader validates the header h (the first bytes of the pack, up to
// 24) against the actual pack size.
func checkHeader(h []byte, size int64) error {
	// Magic and version first, as far as present: a short file that is not
	// a pack, or a pack of a newer format, should say so, not "truncated".
	if len(h) >= 8 && string(h[:8]) != packMagic {
		return corruptf("not a pack (bad magic)")
	}
	if len(h) >= 12 {
		if v := le.Uint32(h[8:]); v != PackVersion && v != PackVersionDeltas {
			return fmt.Errorf("pack version %d: %w", v, ErrUnsupportedVersion)
		}
	}
	if size < packHeaderSize || len(h) < packHeaderSize {
		return fmt.Errorf("pack of %d bytes: %w", size, ErrTruncated)
	}
	if f := le.Uint32(h[12:]); f != 0 {
		return corruptf("pack header flags %#x", f)
	}
	switch declared := le.Uint64(h[16:]); {
	case uint64(size) < declared:
		return fmt.Errorf("pack of %d bytes, header declares %d: %w", size, declared, ErrTruncated)
	case uint64(size) > declared:
		return corruptf("pack of %d bytes, header declares %d", size, declared)
	}
	if size < packMinSize {
		return corruptf("pack of %d bytes is too small to hold an object", size)
	}
	return nil
}

// checkTrailer validates the trailer's fields (not its checksum) and returns
// where the index starts and how many entries it has.
func checkTrailer(t []byte, size int64) (indexOff uint64, count int, err error) {
	indexOff = le.Uint64(t)
	n := le.Uint32(t[8:])
	if f := le.Uint32(t[12:]); f != 0 {
		return 0, 0, corruptf("pack trailer flags %#x", f)
	}
	if n == 0 {
		return 0, 0, corruptf("pack holds no objects")
	}
	end := uint64(size) - packTrailerSize
	if indexOff < packHeaderSize || indexOff > end || (end-indexOff)/indexEntrySize != uint64(n) || (end-indexOff)%indexEntrySize != 0 {
		return 0, 0, corruptf("pack index of %d entries does not fit at offset %d", n, indexOff)
	}
	return indexOff, int(n), nil
}

// checkIndex validates the index: IDs strictly increasing, and the records
// it points to tiling the bytes between header and index exactly, so that
// no byte of a pack is unaccounted for.
func checkIndex(index []byte, indexOff uint64) error {
	n := len(index) / indexEntrySize
	spans := make([]indexEntry, n)
	for i := range spans {
		spans[i] = readIndexEntry(index[i*indexEntrySize:])
		if i > 0 && bytes.Compare(spans[i-1].id[:], spans[i].id[:]) >= 0 {
			return corruptf("pack index is not sorted by ID at entry %d", i)
		}
	}
	slices.SortFunc(spans, func(a, b indexEntry) int { return cmp.Compare(a.offset, b.offset) })
	next := uint64(packHeaderSize)
	for _, s := range spans {
		if s.offset != next {
			return corruptf("pack record at offset %d, expected %d", s.offset, next)
		}
		next += recordHeader + uint64(s.stored)
	}
	if next != indexOff {
		return corruptf("pack records end at %d, index starts at %d", next, indexOff)
	}
	return nil
}

// record is one record of a pack, checked against its index entry but
// not decoded.
type record struct {
	kind    Kind
	enc     byte
	id      ID
	bodyLen uint32
	data    []byte // the stored bytes
}

// parseRecord checks rec (a record's header and stored bytes, exactly)
// against its index entry e. deltas says whether the record may be a
// tree delta: only in a version-2 pack, or in the local store, which
// checked each pack's version when it added it.
func parseRecord(rec []byte, e indexEntry, deltas bool) (record, error) {
	if len(rec) != recordHeader+int(e.stored) {
		return record{}, corruptf("pack record of %d bytes, index says %d", len(rec), recordHeader+int(e.stored))
	}
	r := record{kind: Kind(rec[0]), enc: rec[1], id: ID(rec[2:34]), bodyLen: le.Uint32(rec[34:]), data: rec[recordHeader:]}
	stored := le.Uint32(rec[38:])
	switch {
	case r.id != e.id:
		return record{}, corruptf("pack record ID differs from its index entry")
	case stored != e.stored:
		return record{}, corruptf("pack record length differs from its index entry")
	case r.bodyLen == 0 || r.bodyLen > MaxObjectSize:
		return record{}, corruptf("pack record body length %d", r.bodyLen)
	case r.enc == encodingDelta && !deltas:
		return record{}, corruptf("tree delta record in a version-1 pack")
	case r.enc == encodingDelta && r.kind != KindTree:
		return record{}, corruptf("delta record of a %v", r.kind)
	case r.enc > encodingDelta:
		return record{}, corruptf("pack record encoding %d", r.enc)
	}
	return r, nil
}

// whole decodes a record stored whole (raw or zstd) and verifies the body
// against the ID. The body may alias the record.
func (r record) whole() (Object, error) {
	var body []byte
	switch r.enc {
	case encodingRaw:
		if int(r.bodyLen) != len(r.data) {
			return Object{}, corruptf("raw pack record with body length %d, stored %d", r.bodyLen, len(r.data))
		}
		body = r.data
	case encodingZstd:
		var err error
		// The room past the body lets the decoder copy without checking
		// every copy against the end (it may write up to 32 bytes beyond
		// what it produces): with a buffer of the exact size it takes its
		// safe path, about three times slower on chunk-sized bodies, which
		// is most of what reading a file's many versions (blame) costs.
		body, err = zstdDecoder().DecodeAll(r.data, make([]byte, 0, int(r.bodyLen)+zstdRoom))
		if err != nil {
			return Object{}, corruptf("pack record: zstd: %v", err)
		}
		if len(body) != int(r.bodyLen) {
			return Object{}, corruptf("pack record body of %d bytes, declared %d", len(body), r.bodyLen)
		}
	default:
		return Object{}, corruptf("pack record encoding %d", r.enc)
	}
	o := Object{ID: r.id, Kind: r.kind, Body: body}
	if err := o.verify(); err != nil {
		return Object{}, err
	}
	return o, nil
}
