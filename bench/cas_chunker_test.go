package bench

import (
	"crypto/sha256"
	"strconv"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// casRandom returns n bytes from the xorshift64 stream seeded with seed:
// incompressible, boundary-rich input, the same on every run and Go version.
func casRandom(seed uint64, n int) []byte {
	b := make([]byte, n)
	x := seed | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x >> 56)
	}
	return b
}

// BenchmarkCASChunker measures the content-defined chunker alone (boundary
// search over 8 MiB) on one goroutine. Target: at least 1 GB/s.
func BenchmarkCASChunker(b *testing.B) {
	data := casRandom(1, 8<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		n := 0
		for range cas.Chunks(data) {
			n++
		}
		if n < len(data)/cas.MaxChunk {
			b.Fatalf("%d chunks", n)
		}
	}
}

// BenchmarkCASHash compares the object hash, BLAKE3-256, with the named
// reference crypto/sha256, on a chunk-sized and a large input, in one run.
func BenchmarkCASHash(b *testing.B) {
	for _, size := range []int{8 << 10, 1 << 20} {
		data := casRandom(2, size)
		name := sizeName(size)
		b.Run("blake3/"+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				cas.Sum(data)
			}
		})
		b.Run("sha256/"+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				sha256.Sum256(data)
			}
		})
	}
}

// BenchmarkCASWriteFileID is what the server pays per changed file: chunk,
// hash every chunk and the file object, store nothing.
func BenchmarkCASWriteFileID(b *testing.B) {
	for _, size := range []int{2 << 10, 1 << 20} {
		data := casRandom(2, size)
		b.Run(sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := cas.WriteFile(nil, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sizeName names an input size for sub-benchmarks ("8KiB", "1MiB"). The
// merge benchmarks use it too.
func sizeName(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MiB"
	}
	return strconv.Itoa(n>>10) + "KiB"
}
