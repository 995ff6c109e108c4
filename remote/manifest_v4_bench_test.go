package remote

import (
	"fmt"
	"testing"
)

// `current` is decoded (and checked canonical) on every commit and pull,
// and encoded on every publication; its cost grows with the tail.
func BenchmarkManifestV4(b *testing.B) {
	for _, n := range []int{20, 300} {
		m, _ := buildV4(b, n, 2)
		data, err := EncodeManifestV4(m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("decode/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeManifestV4(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("encode/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeManifestV4(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
