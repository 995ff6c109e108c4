package cas_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Documentation-only mirror of the pack layout in docs/format.md. These
// structs are written with encoding/binary (little-endian, no padding), as
// a second encoder that shares no code with the package: if the package
// and this mirror disagree, one of them no longer matches the document.

type docPackHeader struct {
	Magic   [8]byte // "SLVDPACK"
	Version uint32  // 1, or 2 when a record is a tree delta
	Flags   uint32  // 0
	Length  uint64  // total pack length in bytes
}

type docRecordHeader struct {
	Kind         uint8 // object kind, equal to the body's first byte
	Encoding     uint8 // 0 raw, 1 zstd, 2 tree delta
	ID           [32]byte
	BodyLength   uint32 // canonical body length
	StoredLength uint32 // length of the stored bytes that follow
}

type docIndexEntry struct {
	ID           [32]byte // strictly increasing
	Offset       uint64   // of the record header, from the start of the pack
	StoredLength uint32
}

type docTrailer struct {
	IndexOffset uint64
	Count       uint32
	Flags       uint32 // 0
	// followed by the BLAKE3-256 of every preceding byte
}

// docDeltaHeader starts the stored bytes of a tree delta (4.8); the edits
// follow, each a docDeltaEdit, the name bytes, and for a set the ID.
type docDeltaHeader struct {
	Base  [32]byte
	Edits uint32
}

type docDeltaEdit struct {
	Op         uint8 // 0 remove, 2 set a file entry, 3 set a tree entry
	NameLength uint16
}

// docEdit is one edit as a test writes it down.
type docEdit struct {
	op   uint8
	name string
	id   cas.ID
}

// docDelta encodes the stored bytes of a tree delta against base.
func docDelta(t *testing.T, base cas.ID, edits []docEdit) []byte {
	t.Helper()
	var b bytes.Buffer
	w := func(v any) {
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	w(docDeltaHeader{Base: base, Edits: uint32(len(edits))})
	for _, e := range edits {
		w(docDeltaEdit{Op: e.op, NameLength: uint16(len(e.name))})
		b.WriteString(e.name)
		if e.op != 0 {
			b.Write(e.id[:])
		}
	}
	return b.Bytes()
}

// docRecord is one object as the mirror encoder stores it: raw, zstd
// (stored), or a tree delta (delta, its stored bytes).
type docRecord struct {
	obj    cas.Object
	zstd   bool
	stored []byte
	delta  []byte
}

// docEncodePack writes records in the given order and the index sorted by ID.
func docEncodePack(t *testing.T, recs []docRecord) []byte {
	t.Helper()
	var body bytes.Buffer
	var index []docIndexEntry
	w := func(v any) {
		if err := binary.Write(&body, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	w(docPackHeader{}) // placeholder, rewritten below
	version := uint32(1)
	for _, r := range recs {
		stored, enc := r.obj.Body, uint8(0)
		if r.zstd {
			stored, enc = r.stored, 1
		}
		if r.delta != nil {
			stored, enc, version = r.delta, 2, 2
		}
		index = append(index, docIndexEntry{ID: r.obj.ID, Offset: uint64(body.Len()), StoredLength: uint32(len(stored))})
		w(docRecordHeader{Kind: uint8(r.obj.Kind), Encoding: enc, ID: r.obj.ID, BodyLength: uint32(len(r.obj.Body)), StoredLength: uint32(len(stored))})
		body.Write(stored)
	}
	indexOff := uint64(body.Len())
	for sorted := false; !sorted; { // a bubble sort: obviously right
		sorted = true
		for i := 1; i < len(index); i++ {
			if bytes.Compare(index[i-1].ID[:], index[i].ID[:]) > 0 {
				index[i-1], index[i] = index[i], index[i-1]
				sorted = false
			}
		}
	}
	w(index)
	w(docTrailer{IndexOffset: indexOff, Count: uint32(len(index))})
	out := body.Bytes()
	var h bytes.Buffer
	_ = binary.Write(&h, binary.LittleEndian, docPackHeader{Magic: [8]byte([]byte("SLVDPACK")), Version: version, Length: uint64(len(out) + 32)})
	copy(out, h.Bytes())
	sum := cas.Sum(out)
	return append(out, sum[:]...)
}

// The pinned v1 pack, the package's writer and the mirror encoder agree
// byte for byte on the small vector objects (stored raw: none of them
// compresses to 7/8 of its size).
func TestPackLayoutMatchesDocumentation(t *testing.T) {
	objs := smallVectorObjects(t)
	var recs []docRecord
	w := cas.NewPackWriter()
	for _, o := range objs {
		recs = append(recs, docRecord{obj: o})
		mustPut(t, w, o)
	}
	got, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	doc := docEncodePack(t, recs)
	if !bytes.Equal(got, doc) {
		t.Fatalf("PackWriter output (%d bytes) differs from the documented layout (%d bytes)", len(got), len(doc))
	}
	pinned, err := os.ReadFile("testdata/v1/small.pack")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, pinned) {
		t.Fatal("PackWriter output differs from testdata/v1/small.pack")
	}
	const wantSum = "3f5826d384504f06f85920bcd383dc33d30f06c6258b558effe35cb4b4311702"
	if s := cas.Sum(pinned).String(); s != wantSum {
		t.Fatalf("testdata/v1/small.pack BLAKE3 %s, want %s", s, wantSum)
	}
}

// A reader accepts any standard zstd frame in a record, not only the ones
// this package's encoder makes, so an independent writer can use any
// zstd implementation.
func TestPackReaderAcceptsForeignZstd(t *testing.T) {
	text := genText(71, 3000)
	o := mustFile(t, cas.NewObjectSet(), text)
	m := cas.NewObjectSet()
	mustFile(t, m, text)
	obj, _ := m.Get(o)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	frame := enc.EncodeAll(obj.Body, nil)
	p, err := cas.OpenPack(docEncodePack(t, []docRecord{{obj: obj, zstd: true, stored: frame}}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := cas.ReadFile(p, o)
	if err != nil || !bytes.Equal(got, text) {
		t.Fatalf("ReadFile through a foreign zstd frame: %v", err)
	}
}
