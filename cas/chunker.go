package cas

import (
	"io"
	"iter"
)

// Chunking parameters of format version 1 (docs/format.md, "Chunking").
// Changing any of them, or the gear table, moves chunk boundaries and so
// changes the IDs of every file larger than InlineMax: a format break.
const (
	MinChunk = 2 << 10  // no boundary before this many bytes
	AvgChunk = 8 << 10  // the normal size: the mask switches here
	MaxChunk = 64 << 10 // a boundary is forced here
)

// Normalized chunking (FastCDC level 2): a chunk up to AvgChunk bytes ends
// only where the 15 top bits of the gear hash are zero (p = 2^-15), a longer
// one where the 11 top bits are (p = 2^-11). The top bits are used because
// bit k of the gear hash depends on the last k+1 bytes only: bit 63 sees a
// 64-byte window.
const (
	maskSmall = 0xfffe_0000_0000_0000 // top 15 bits
	maskLarge = 0xffe0_0000_0000_0000 // top 11 bits
)

// Cut returns the length of the first chunk of data, where data is all the
// content that remains (or at least its next MaxChunk bytes). The result is
// len(data) when data is at most MinChunk bytes or holds no boundary, and
// never more than MaxChunk.
func Cut(data []byte) int {
	n := len(data)
	if n <= MinChunk {
		return n
	}
	if n > MaxChunk {
		n = MaxChunk
	}
	normal := min(AvgChunk, n)
	var fp uint64
	// The hash restarts at every chunk; the bytes before MinChunk-1 cannot
	// end a chunk and, at most 64 bytes later, no longer affect the hash.
	i := MinChunk - 1
	for ; i < normal; i++ {
		fp = fp<<1 + gear[data[i]]
		if fp&maskSmall == 0 {
			return i + 1
		}
	}
	for ; i < n; i++ {
		fp = fp<<1 + gear[data[i]]
		if fp&maskLarge == 0 {
			return i + 1
		}
	}
	return n
}

// Chunks yields the content-defined chunks of content in order (nothing
// for empty content). The chunks alias content.
func Chunks(content []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for len(content) > 0 {
			n := Cut(content)
			if !yield(content[:n]) {
				return
			}
			content = content[n:]
		}
	}
}

// Chunker splits a stream into the same chunks Chunks gives for the whole
// content, however the reader slices its reads.
type Chunker struct {
	r          io.Reader
	buf        []byte
	start, end int // unconsumed bytes are buf[start:end]
	eof        bool
}

// NewChunker returns a Chunker reading r.
func NewChunker(r io.Reader) *Chunker {
	return &Chunker{r: r, buf: make([]byte, 2*MaxChunk)}
}

// Next returns the next chunk, valid until the following call, or io.EOF
// after the last one. A read error other than io.EOF is returned as is.
func (c *Chunker) Next() ([]byte, error) {
	// Cut must see MaxChunk bytes (or the true end) to place the boundary
	// exactly where it would in the whole content.
	for !c.eof && c.end-c.start < MaxChunk {
		if len(c.buf)-c.start < MaxChunk {
			c.end = copy(c.buf, c.buf[c.start:c.end])
			c.start = 0
		}
		n, err := c.r.Read(c.buf[c.end:])
		c.end += n
		if err == io.EOF {
			c.eof = true
		} else if err != nil {
			return nil, err
		}
	}
	if c.start == c.end {
		return nil, io.EOF
	}
	n := Cut(c.buf[c.start:c.end])
	chunk := c.buf[c.start : c.start+n]
	c.start += n
	return chunk, nil
}
