package merge

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// CommonPrefix returns the length of the longest common prefix of a and
// b: whole blocks compared by bytes.Equal (vectorised), the first
// differing one eight bytes at a time. The line diff sets the common start
// of two texts aside with it; blame compares chunk regions with it.
func CommonPrefix(a, b []byte) int {
	const block = 256
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	i := 0
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// CommonSuffix returns the length of the longest common suffix of a and
// b, compared as CommonPrefix compares, from the end.
func CommonSuffix(a, b []byte) int {
	const block = 256
	n := min(len(a), len(b))
	a, b = a[len(a)-n:], b[len(b)-n:]
	i := 0 // bytes matched from the end
	for i+block <= n && bytes.Equal(a[n-i-block:n-i], b[n-i-block:n-i]) {
		i += block
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[n-i-8:]) ^ binary.LittleEndian.Uint64(b[n-i-8:]); x != 0 {
			return i + bits.LeadingZeros64(x)/8
		}
	}
	for i < n && a[n-1-i] == b[n-1-i] {
		i++
	}
	return i
}
