package cas_test

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// xorshift is the tests' pseudo-random generator: defined here, not taken
// from math/rand, so that pinned vectors built from it never move.
type xorshift uint64

func (x *xorshift) next() uint64 {
	*x ^= *x << 13
	*x ^= *x >> 7
	*x ^= *x << 17
	return uint64(*x)
}

// genBytes returns n pseudo-random bytes of the stream seeded with seed
// (the top byte of each xorshift64 output).
func genBytes(seed uint64, n int) []byte {
	x := xorshift(seed)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(x.next() >> 56)
	}
	return b
}

var words = []string{
	"the", "notebook", "agent", "merge", "commit", "line", "file", "store",
	"pack", "chunk", "of", "and", "a", "to", "is", "in", "conflict", "remote",
	"local", "base", "tree", "object", "write", "read", "pull", "change",
}

// genText returns about n bytes of word text in lines, seeded: realistic
// enough that zstd compresses it about as much as notes.
func genText(seed uint64, n int) []byte {
	x := xorshift(seed)
	b := make([]byte, 0, n+16)
	col := 0
	for len(b) < n {
		w := words[x.next()%uint64(len(words))]
		b = append(b, w...)
		col += len(w)
		if col > 60+int(x.next()%20) {
			b = append(b, '\n')
			col = 0
		} else {
			b = append(b, ' ')
			col++
		}
	}
	return b[:n]
}

func mustPut(t testing.TB, sink cas.Sink, o cas.Object) {
	t.Helper()
	if err := sink.Put(o); err != nil {
		t.Fatal(err)
	}
}

func mustFile(t testing.TB, sink cas.Sink, content []byte) cas.ID {
	t.Helper()
	id, err := cas.WriteFile(sink, content)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustChunk(t testing.TB, data []byte) cas.Object {
	t.Helper()
	o, err := cas.ChunkObject(data)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
