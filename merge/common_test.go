package merge

import (
	"math/rand/v2"
	"testing"
)

// CommonPrefix and CommonSuffix agree with a byte-by-byte count on texts
// of unequal lengths whose first difference falls anywhere: inside a
// 256-byte block, an 8-byte word or the tail.
func TestCommonPrefixAndSuffix(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	naivePrefix := func(a, b []byte) int {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		return i
	}
	naiveSuffix := func(a, b []byte) int {
		i := 0
		for i < len(a) && i < len(b) && a[len(a)-1-i] == b[len(b)-1-i] {
			i++
		}
		return i
	}
	for range 5000 {
		common := make([]byte, r.IntN(700))
		for i := range common {
			common[i] = byte('a' + r.IntN(3))
		}
		tail := func() []byte {
			b := make([]byte, r.IntN(20))
			for i := range b {
				b[i] = byte('a' + r.IntN(3))
			}
			return b
		}
		a := append(append([]byte{}, common...), tail()...)
		b := append(append([]byte{}, common...), tail()...)
		if got, want := CommonPrefix(a, b), naivePrefix(a, b); got != want {
			t.Fatalf("CommonPrefix(%q, %q) = %d, want %d", a, b, got, want)
		}
		a = append(tail(), common...)
		b = append(tail(), common...)
		if got, want := CommonSuffix(a, b), naiveSuffix(a, b); got != want {
			t.Fatalf("CommonSuffix(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}
