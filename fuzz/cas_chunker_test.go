package fuzz

import (
	"bytes"
	"io"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// casExpand grows a short fuzz input into content long enough to hold
// several chunks: the input repeated, each copy mixed with its index so
// repeats do not line up with the gear window.
func casExpand(seed []byte, n int) []byte {
	if len(seed) == 0 {
		return nil
	}
	out := make([]byte, n)
	for i := range out {
		out[i] = seed[i%len(seed)] ^ byte(i/len(seed))
	}
	return out
}

// stepReader returns its data in reads whose sizes cycle through steps.
type stepReader struct {
	data  []byte
	steps []byte
	i     int
}

func (r *stepReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(r.steps) > 0 {
		n = 1 + int(r.steps[r.i%len(r.steps)])*97
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// FuzzChunker: chunks concatenate to the input, respect the size bounds,
// and are the same whether the content is given whole or streamed in
// arbitrary reads.
func FuzzChunker(f *testing.F) {
	f.Add([]byte{}, uint16(0), []byte{1})
	f.Add([]byte("a line of notes\n"), uint16(300), []byte{0, 255, 7})
	f.Add([]byte{0}, uint16(200), []byte{100})
	f.Fuzz(func(t *testing.T, seed []byte, kib uint16, steps []byte) {
		content := seed
		if kib > 0 {
			content = casExpand(seed, int(kib%512)<<10)
		}
		var whole [][]byte
		for c := range cas.Chunks(content) {
			whole = append(whole, c)
		}
		if !bytes.Equal(bytes.Join(whole, nil), content) {
			t.Fatal("chunks do not concatenate to the content")
		}
		for i, c := range whole {
			if len(c) == 0 || len(c) > cas.MaxChunk || (i < len(whole)-1 && len(c) < cas.MinChunk) {
				t.Fatalf("chunk %d of %d has %d bytes", i, len(whole), len(c))
			}
		}
		ch := cas.NewChunker(&stepReader{data: content, steps: steps})
		for i := 0; ; i++ {
			c, err := ch.Next()
			if err == io.EOF {
				if i != len(whole) {
					t.Fatalf("streamed %d chunks, want %d", i, len(whole))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if i >= len(whole) || !bytes.Equal(c, whole[i]) {
				t.Fatalf("streamed chunk %d differs", i)
			}
		}
	})
}
