package cas_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

func TestFileRoundTripAcrossSizes(t *testing.T) {
	for _, n := range []int{0, 1, cas.InlineMax - 1, cas.InlineMax, cas.InlineMax + 1, cas.MaxChunk, cas.MaxChunk + 1, 1 << 20} {
		content := genBytes(uint64(n)+5, n)
		m := cas.NewObjectSet()
		id := mustFile(t, m, content)
		if computed := mustFile(t, nil, content); computed != id {
			t.Fatalf("%d bytes: ID without a sink differs from the stored one", n)
		}
		got, err := cas.ReadFile(m, id)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("%d bytes: content differs after ReadFile", n)
		}
		o, _ := m.Get(id)
		f, err := cas.DecodeFile(o)
		if err != nil {
			t.Fatal(err)
		}
		if inline := f.Chunks == nil; inline != (n <= cas.InlineMax) || f.Size != uint64(n) {
			t.Fatalf("%d bytes: inline=%v size=%d, want inline up to InlineMax=%d", n, inline, f.Size, cas.InlineMax)
		}
		if wantObjects := 1 + len(f.Chunks); m.Len() > wantObjects {
			t.Fatalf("%d bytes: %d objects stored for %d chunks", n, m.Len(), len(f.Chunks))
		}
	}
}

func TestReadFileMissingChunk(t *testing.T) {
	m := cas.NewObjectSet()
	id := mustFile(t, m, genBytes(21, 100<<10))
	o, _ := m.Get(id)
	f, _ := cas.DecodeFile(o)
	m.Delete(f.Chunks[1].ID)
	if _, err := cas.ReadFile(m, id); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("ReadFile with a missing chunk: error = %v, want ErrNotFound", err)
	}
}

func TestReadFileRefusesOtherKinds(t *testing.T) {
	m := cas.NewObjectSet()
	c := mustChunk(t, []byte("chunk"))
	mustPut(t, m, c)
	if _, err := cas.ReadFile(m, c.ID); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("ReadFile of a chunk: error = %v, want ErrCorrupt", err)
	}
}

// chunkedBody encodes a chunked file body by hand (docs/format.md), so that
// the decoder's refusals can be tested with bodies the encoder won't make.
func chunkedBody(size uint64, chunks ...cas.ChunkRef) []byte {
	b := []byte{byte(cas.KindFile), 1}
	b = binary.LittleEndian.AppendUint64(b, size)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(chunks)))
	for _, c := range chunks {
		b = append(b, c.ID[:]...)
		b = binary.LittleEndian.AppendUint32(b, c.Size)
	}
	return b
}

// Only one encoding of any content exists: every other form is refused.
func TestFileDecoderRefusesNonCanonicalForms(t *testing.T) {
	a, b := cas.Sum([]byte("a")), cas.Sum([]byte("b"))
	cases := map[string][]byte{
		"inline above InlineMax": append([]byte{2, 0}, make([]byte, cas.InlineMax+1)...),
		"chunked at InlineMax":   chunkedBody(cas.InlineMax, cas.ChunkRef{ID: a, Size: cas.InlineMax}),
		"size not the sum":       chunkedBody(10000, cas.ChunkRef{ID: a, Size: 5000}, cas.ChunkRef{ID: b, Size: 4000}),
		"short chunk not last":   chunkedBody(9000, cas.ChunkRef{ID: a, Size: 100}, cas.ChunkRef{ID: b, Size: 8900}),
		"chunk above MaxChunk":   chunkedBody(cas.MaxChunk+1, cas.ChunkRef{ID: a, Size: cas.MaxChunk + 1}),
		"zero chunk ID":          chunkedBody(5000, cas.ChunkRef{Size: 5000}),
		"no chunks":              chunkedBody(5000),
		"count beyond body":      chunkedBody(5000, cas.ChunkRef{ID: a, Size: 5000})[:14],
		"trailing byte":          append(chunkedBody(5000, cas.ChunkRef{ID: a, Size: 5000}), 0),
		"unknown representation": {2, 7},
		"no representation":      {2},
	}
	for name, body := range cases {
		if _, err := cas.DecodeObject(body); !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("%s: DecodeObject error = %v, want ErrCorrupt", name, err)
		}
	}
	f := cas.File{Size: 5000, Chunks: []cas.ChunkRef{{ID: a, Size: 100}}}
	if _, err := cas.EncodeFile(f); !errors.Is(err, cas.ErrInvalidObject) {
		t.Errorf("EncodeFile accepted a size that is not the sum of its chunks: %v", err)
	}
	// A hand-made canonical body is accepted: the refusals above are about
	// the rule each case breaks, not about hand-made bodies.
	ok := chunkedBody(9000, cas.ChunkRef{ID: a, Size: 5000}, cas.ChunkRef{ID: b, Size: 4000})
	if _, err := cas.DecodeObject(ok); err != nil {
		t.Fatalf("canonical chunked body refused: %v", err)
	}
}

// holdingPack is a pack writer that holds some objects already (as a
// commit's sink holds the parent's chunks) and counts what it is given.
type holdingPack struct {
	w    *cas.PackWriter
	held map[cas.ID]bool
	puts int
}

func (h *holdingPack) Put(o cas.Object) error { h.puts++; return h.w.Put(o) }
func (h *holdingPack) Holds(id cas.ID) bool   { return h.held[id] }

// A file put from the chunk list HashFile returned is the file WriteFile
// puts: the same ID, the same objects, every chunk verified by the pack
// writer; chunks the sink holds are not put; a list that is not the
// content's is refused, not stored.
func TestWriteFileChunksIsWriteFile(t *testing.T) {
	content := genText(7, 200<<10)
	id, chunks, err := cas.HashFile(content)
	if err != nil {
		t.Fatal(err)
	}
	if want := mustFile(t, nil, content); id != want || len(chunks) < 3 {
		t.Fatalf("HashFile: %v with %d chunks, WriteFile's ID %v", id, len(chunks), want)
	}
	whole := cas.NewPackWriter()
	mustFile(t, whole, content)
	wholePack, err := whole.Finish()
	if err != nil {
		t.Fatal(err)
	}
	h := &holdingPack{w: cas.NewPackWriter(), held: map[cas.ID]bool{}}
	got, err := cas.WriteFileChunks(h, content, chunks)
	if err != nil || got != id {
		t.Fatalf("WriteFileChunks: %v, %v; want %v", got, err, id)
	}
	pack, err := h.w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pack, wholePack) {
		t.Fatal("the pack differs from the one WriteFile fills")
	}
	p, err := cas.OpenPack(pack)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := cas.ReadFile(p, id); err != nil || !bytes.Equal(back, content) {
		t.Fatalf("read back: %v", err)
	}

	h = &holdingPack{w: cas.NewPackWriter(), held: map[cas.ID]bool{chunks[0].ID: true, chunks[1].ID: true}}
	if _, err := cas.WriteFileChunks(h, content, chunks); err != nil {
		t.Fatal(err)
	}
	if want := len(chunks) - 2 + 1; h.puts != want {
		t.Fatalf("%d objects put with two chunks held, want %d", h.puts, want)
	}

	short := append([]cas.ChunkRef(nil), chunks...)
	short[0].Size--
	if _, err := cas.WriteFileChunks(&holdingPack{w: cas.NewPackWriter()}, content, short); !errors.Is(err, cas.ErrInvalidObject) {
		t.Fatalf("sizes that do not add up: %v", err)
	}
	shifted := append([]cas.ChunkRef(nil), chunks...)
	shifted[0].Size--
	shifted[1].Size++ // the same total, other bodies under the listed IDs
	if _, err := cas.WriteFileChunks(&holdingPack{w: cas.NewPackWriter()}, content, shifted); !errors.Is(err, cas.ErrInvalidObject) {
		t.Fatalf("bodies that are not the listed chunks: %v", err)
	}
	if _, c, err := cas.HashFile(content[:cas.InlineMax]); err != nil || c != nil {
		t.Fatalf("an inline file has no chunk list: %v, %v", c, err)
	}
}
