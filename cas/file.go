package cas

import (
	"fmt"
	"slices"
)

// InlineMax is the largest content stored inline in its file object
// (4 KiB, format version 1). Such a file is a single object, so the many
// small notes of a notebook cost one object each; anything larger is
// chunked so that edits share unchanged chunks.
const InlineMax = 4096

// File is a decoded file object: either Inline content (Size <= InlineMax,
// Chunks nil) or the ordered Chunks of a larger content.
type File struct {
	Size   uint64
	Inline []byte
	Chunks []ChunkRef
}

// ChunkRef is one chunk of a chunked file: its ID and length in bytes.
type ChunkRef struct {
	ID   ID
	Size uint32
}

// File object layout (docs/format.md): kind, representation, then either
// the inline bytes or size, count and count (ID, length) pairs.
const (
	fileInline  = 0
	fileChunked = 1

	fileChunkedHeader = 1 + 1 + 8 + 4
	fileChunkEntry    = 32 + 4
)

// EncodeFile returns the canonical file object of f, refusing (with
// ErrInvalidObject) anything WriteFile would not produce.
func EncodeFile(f File) (Object, error) {
	var body []byte
	if f.Chunks == nil {
		if f.Size != uint64(len(f.Inline)) {
			return Object{}, fmt.Errorf("%w: inline file size %d but %d bytes", ErrInvalidObject, f.Size, len(f.Inline))
		}
		body = make([]byte, 2, 2+len(f.Inline))
		body[0], body[1] = byte(KindFile), fileInline
		body = append(body, f.Inline...)
	} else {
		body = make([]byte, fileChunkedHeader, fileChunkedHeader+fileChunkEntry*len(f.Chunks))
		body[0], body[1] = byte(KindFile), fileChunked
		le.PutUint64(body[2:], f.Size)
		le.PutUint32(body[10:], uint32(len(f.Chunks)))
		for _, c := range f.Chunks {
			body = append(body, c.ID[:]...)
			body = le.AppendUint32(body, c.Size)
		}
	}
	if _, err := decodeFile(body); err != nil {
		return Object{}, fmt.Errorf("%w: %w", ErrInvalidObject, err)
	}
	return newObject(body), nil
}

// DecodeFile decodes a file object, refusing any other kind.
func DecodeFile(o Object) (File, error) {
	if o.Kind != KindFile {
		return File{}, corruptf("object is a %v, want a file", o.Kind)
	}
	return decodeFile(o.Body)
}

func decodeFile(body []byte) (File, error) {
	r := reader{b: body}
	if Kind(r.u8("file kind")) != KindFile {
		return File{}, corruptf("not a file object")
	}
	switch rep := r.u8("file representation"); {
	case r.err != nil:
		return File{}, r.err
	case rep == fileInline:
		if len(r.b) > InlineMax {
			return File{}, corruptf("inline file of %d bytes exceeds %d", len(r.b), InlineMax)
		}
		return File{Size: uint64(len(r.b)), Inline: r.b}, nil
	case rep == fileChunked:
		return decodeChunkedFile(&r)
	default:
		return File{}, corruptf("unknown file representation %d", rep)
	}
}

func decodeChunkedFile(r *reader) (File, error) {
	f := File{Size: r.u64("file size")}
	count := r.u32("chunk count")
	if r.err != nil {
		return File{}, r.err
	}
	// Allocate from the bytes present, never from the untrusted count.
	if count == 0 || uint64(len(r.b)) != uint64(count)*fileChunkEntry {
		return File{}, corruptf("file declares %d chunks in %d bytes", count, len(r.b))
	}
	if f.Size <= InlineMax {
		return File{}, corruptf("chunked file of %d bytes must be inline", f.Size)
	}
	f.Chunks = make([]ChunkRef, count)
	var total uint64
	for i := range f.Chunks {
		c := ChunkRef{ID: r.id("chunk ID"), Size: r.u32("chunk size")}
		last := i == len(f.Chunks)-1
		switch {
		case c.ID.IsZero():
			return File{}, corruptf("chunk %d has the zero ID", i)
		case c.Size == 0 || c.Size > MaxChunk:
			return File{}, corruptf("chunk %d has %d bytes (want 1..%d)", i, c.Size, MaxChunk)
		case !last && c.Size < MinChunk:
			return File{}, corruptf("chunk %d of %d bytes is short but not last", i, c.Size)
		}
		total += uint64(c.Size)
		f.Chunks[i] = c
	}
	if total != f.Size {
		return File{}, corruptf("file size %d is not the sum of its chunks %d", f.Size, total)
	}
	return f, r.done("file")
}

// WriteFile chunks content, puts its chunk objects and its file object into
// sink, and returns the file ID. A nil sink only computes the ID.
func WriteFile(sink Sink, content []byte) (ID, error) {
	id, _, err := writeFile(sink, content)
	return id, err
}

// HashFile returns the file ID of content and, for content stored in
// chunks (larger than InlineMax), its chunk list: what WriteFileChunks
// needs to put the same file without cutting and hashing it again.
func HashFile(content []byte) (ID, []ChunkRef, error) { return writeFile(nil, content) }

// Holder is a Sink that can tell an object it would not store (held
// already): WriteFileChunks then does not build that chunk's object.
type Holder interface {
	Sink
	Holds(id ID) bool
}

// WriteFileChunks puts into sink the file of content whose chunk list
// HashFile returned (chunks), and returns its ID: the chunks' bodies are
// cut from content at the listed sizes, each keeping the ID listed,
// and those sink holds are skipped. The sink's checks still apply to
// what is put (a pack writer verifies each object against its ID), so a
// list that is not content's fails there rather than storing a wrong
// chunk. Chunks whose sizes do not add up to content's length are refused.
func WriteFileChunks(sink Holder, content []byte, chunks []ChunkRef) (ID, error) {
	var total uint64
	for _, c := range chunks {
		total += uint64(c.Size)
	}
	if len(chunks) == 0 || total != uint64(len(content)) || len(content) <= InlineMax {
		return ID{}, fmt.Errorf("%w: a chunk list of %d bytes for %d bytes of content", ErrInvalidObject, total, len(content))
	}
	off := 0
	for _, c := range chunks {
		chunk := content[off : off+int(c.Size)]
		off += int(c.Size)
		if sink.Holds(c.ID) {
			continue
		}
		body := make([]byte, 1+len(chunk))
		body[0] = byte(KindChunk)
		copy(body[1:], chunk)
		if err := sink.Put(Object{ID: c.ID, Kind: KindChunk, Body: body}); err != nil {
			return ID{}, err
		}
	}
	o, err := EncodeFile(File{Size: uint64(len(content)), Chunks: chunks})
	if err != nil {
		return ID{}, err
	}
	return o.ID, sink.Put(o)
}

// writeFile is WriteFile, also returning the chunk list (nil: inline).
func writeFile(sink Sink, content []byte) (ID, []ChunkRef, error) {
	if len(content) <= InlineMax {
		o, err := EncodeFile(File{Size: uint64(len(content)), Inline: content})
		if err != nil {
			return ID{}, nil, err
		}
		return o.ID, nil, put(sink, o)
	}
	f := File{Size: uint64(len(content)), Chunks: make([]ChunkRef, 0, len(content)/AvgChunk+1)}
	// Without a sink the chunk bodies are only hashed: reuse one buffer.
	var scratch []byte
	if sink == nil {
		scratch = make([]byte, 1+MaxChunk)
	}
	for chunk := range Chunks(content) {
		body := scratch
		if body == nil {
			body = make([]byte, 1+len(chunk))
		}
		body = body[:1+len(chunk)]
		body[0] = byte(KindChunk)
		copy(body[1:], chunk)
		o := newObject(body)
		if err := put(sink, o); err != nil {
			return ID{}, nil, err
		}
		f.Chunks = append(f.Chunks, ChunkRef{ID: o.ID, Size: uint32(len(chunk))})
	}
	o, err := EncodeFile(f)
	if err != nil {
		return ID{}, nil, err
	}
	return o.ID, f.Chunks, put(sink, o)
}

func put(sink Sink, o Object) error {
	if sink == nil {
		return nil
	}
	return sink.Put(o)
}

// ReadFile returns the content of the file object id.
func ReadFile(src Source, id ID) ([]byte, error) { return AppendFile(nil, src, id) }

// AppendFile appends the content of the file object id to dst: a reader of
// many versions of a file (blame) reuses one buffer instead of allocating
// each version.
func AppendFile(dst []byte, src Source, id ID) ([]byte, error) {
	o, err := get(src, id, KindFile)
	if err != nil {
		return nil, err
	}
	f, err := DecodeFile(o)
	if err != nil {
		return nil, err
	}
	if f.Chunks == nil {
		return append(dst, f.Inline...), nil
	}
	// The size is checked against the chunk list, yet cap the up-front
	// allocation: a hostile file object could still claim a huge size.
	out := slices.Grow(dst, int(min(f.Size, MaxObjectSize)))
	for i, c := range f.Chunks {
		data, err := readChunk(src, i, c)
		if err != nil {
			return nil, err
		}
		out = append(out, data...)
	}
	return out, nil
}

// readChunk reads chunk i of a file, listed as ref, and checks its length.
func readChunk(src Source, i int, ref ChunkRef) ([]byte, error) {
	co, err := get(src, ref.ID, KindChunk)
	if err != nil {
		return nil, fmt.Errorf("chunk %d: %w", i, err)
	}
	data, err := DecodeChunk(co)
	if err != nil {
		return nil, fmt.Errorf("chunk %d: %w", i, err)
	}
	if len(data) != int(ref.Size) {
		return nil, corruptf("chunk %d has %d bytes, file says %d", i, len(data), ref.Size)
	}
	return data, nil
}

// get reads id from src and checks the object is the one asked for and of
// the wanted kind. Sources verify the body against the ID themselves.
func get(src Source, id ID, want Kind) (Object, error) {
	o, err := src.Get(id)
	if err != nil {
		return Object{}, err
	}
	if o.ID != id || len(o.Body) == 0 || Kind(o.Body[0]) != o.Kind {
		return Object{}, corruptf("source returned a different object")
	}
	if o.Kind != want {
		return Object{}, corruptf("object is a %v, want a %v", o.Kind, want)
	}
	return o, nil
}
