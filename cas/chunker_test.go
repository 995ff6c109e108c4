package cas_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/slivingdoc/slivingdoc/cas"
)

// chunkVectorsSHA256 pins testdata/chunks-v1.txt itself, so that the
// vectors cannot be regenerated to fit a changed chunker unnoticed.
const chunkVectorsSHA256 = "ff8c8ca8dab9dca707de4667bb11ffc8657872710f132334885a8696831c40fb"

type chunkVector struct {
	length int
	sum    string
}

func loadChunkVectors(t *testing.T) []chunkVector {
	t.Helper()
	raw, err := os.ReadFile("testdata/chunks-v1.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(raw)); got != chunkVectorsSHA256 {
		t.Fatalf("testdata/chunks-v1.txt was changed (sha256 %s): chunk boundaries are format version 1", got)
	}
	var vs []chunkVector
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		n, err := strconv.Atoi(f[0])
		if err != nil || len(f) != 2 {
			t.Fatalf("bad vector line %q", line)
		}
		vs = append(vs, chunkVector{n, f[1]})
	}
	return vs
}

// The boundaries of a fixed 1 MiB pseudo-random input, with each chunk's
// length and BLAKE3, never change: a moved boundary changes the ID of
// every file larger than InlineMax.
func TestChunkBoundariesArePinned(t *testing.T) {
	want := loadChunkVectors(t)
	var got []chunkVector
	for c := range cas.Chunks(genBytes(1, 1<<20)) {
		got = append(got, chunkVector{len(c), cas.Sum(c).String()})
	}
	if len(got) != len(want) {
		t.Fatalf("%d chunks, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("chunk %d = %d bytes %s, want %d bytes %s", i, got[i].length, got[i].sum, want[i].length, want[i].sum)
		}
	}
}

// Zeros never satisfy the boundary condition, so the chunker cuts at
// MaxChunk: 1 MiB of zeros is 16 identical chunks.
func TestChunkAllZeroInput(t *testing.T) {
	var n int
	for c := range cas.Chunks(make([]byte, 1<<20)) {
		if len(c) != cas.MaxChunk {
			t.Fatalf("chunk %d has %d bytes, want %d", n, len(c), cas.MaxChunk)
		}
		const want = "3bdeaf8f8e98780b318106aafdc3ca257f73df123d97b69112b26044c91a7d56"
		if got := cas.Sum(c).String(); got != want {
			t.Fatalf("chunk %d BLAKE3 %s, want %s", n, got, want)
		}
		n++
	}
	if n != 16 {
		t.Fatalf("%d chunks, want 16", n)
	}
}

// sliceReader returns its data in reads of pseudo-random length (1 byte to
// 3*MaxChunk), to show boundaries do not depend on how input arrives.
type sliceReader struct {
	data []byte
	x    xorshift
}

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), 1+int(r.x.next()%(3*cas.MaxChunk)))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func streamChunks(t *testing.T, r io.Reader) [][]byte {
	t.Helper()
	c := cas.NewChunker(r)
	var out [][]byte
	for {
		chunk, err := c.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(chunk))
	}
}

func TestChunkerIndependentOfReadSizes(t *testing.T) {
	inputs := map[string][]byte{
		"empty":         nil,
		"one byte":      {42},
		"min chunk":     genBytes(2, cas.MinChunk),
		"max chunk+1":   genBytes(3, cas.MaxChunk+1),
		"random 1 MiB":  genBytes(1, 1<<20),
		"text 300 KiB":  genText(4, 300<<10),
		"zeros 200 KiB": make([]byte, 200<<10),
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			var whole [][]byte
			for c := range cas.Chunks(data) {
				whole = append(whole, c)
			}
			readers := map[string]io.Reader{
				"whole":         bytes.NewReader(data),
				"byte by byte":  iotest.OneByteReader(bytes.NewReader(data)),
				"random slices": &sliceReader{data: data, x: 99},
				"half reads":    iotest.HalfReader(bytes.NewReader(data)),
			}
			for rname, r := range readers {
				got := streamChunks(t, r)
				if len(got) != len(whole) {
					t.Fatalf("%s: %d chunks, want %d", rname, len(got), len(whole))
				}
				for i := range got {
					if !bytes.Equal(got[i], whole[i]) {
						t.Fatalf("%s: chunk %d differs", rname, i)
					}
				}
			}
		})
	}
}

func TestChunkerReturnsReadErrors(t *testing.T) {
	boom := fmt.Errorf("disk gone")
	c := cas.NewChunker(iotest.ErrReader(boom))
	if _, err := c.Next(); err != boom {
		t.Fatalf("Next() error = %v, want the reader's error", err)
	}
}

// Every chunk but the last is within [MinChunk, MaxChunk], the last is
// non-empty, and the chunks concatenate to the input.
func TestChunkSizeBounds(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		data := genBytes(seed, 700<<10+int(seed)*977)
		var joined []byte
		var sizes []int
		for c := range cas.Chunks(data) {
			joined = append(joined, c...)
			sizes = append(sizes, len(c))
		}
		if !bytes.Equal(joined, data) {
			t.Fatalf("seed %d: chunks do not concatenate to the input", seed)
		}
		for i, n := range sizes {
			if n > cas.MaxChunk || n == 0 || (i < len(sizes)-1 && n < cas.MinChunk) {
				t.Fatalf("seed %d: chunk %d of %d has %d bytes", seed, i, len(sizes), n)
			}
		}
		if avg := len(data) / len(sizes); avg < cas.AvgChunk/2 || avg > 2*cas.AvgChunk {
			t.Errorf("seed %d: average chunk %d bytes, far from %d", seed, avg, cas.AvgChunk)
		}
	}
}
