package cas

import (
	"encoding/binary"
	"testing"
)

// The gear table is part of format version 1: a changed table moves every
// chunk boundary. Pin its seed and its bytes (256 little-endian uint64).
func TestGearTablePinned(t *testing.T) {
	if want := binary.LittleEndian.Uint64([]byte("slivdoc1")); gearSeed != want {
		t.Fatalf("gear seed %#x, want %#x (\"slivdoc1\" little-endian)", uint64(gearSeed), want)
	}
	var raw []byte
	for _, g := range gear {
		raw = binary.LittleEndian.AppendUint64(raw, g)
	}
	const want = "211d59e0185ffaba6ff0e561475b0bc2ef54874f90880ab64cc5b9c902adfa35"
	if got := Sum(raw).String(); got != want {
		t.Fatalf("gear table BLAKE3 = %s, want %s", got, want)
	}
	if gear != makeGear(gearSeed) {
		t.Fatal("the written-out gear table differs from the one SplitMix64 derives")
	}
	// The first entries, also printed in docs/format.md, for implementers.
	for i, w := range []uint64{0xcb3c6c5e1cc7bada, 0x6299d0ce7164cccd, 0x0a4075ba8218cc87, 0x21f9acc3cee81b1c} {
		if gear[i] != w {
			t.Errorf("gear[%d] = %#016x, want %#016x", i, gear[i], w)
		}
	}
}

const gearSeed = 0x31636f6476696c73 // "slivdoc1" little-endian

// makeGear derives the gear table: 256 outputs of SplitMix64 from seed.
func makeGear(seed uint64) (g [256]uint64) {
	s := seed
	for i := range g {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		g[i] = z ^ z>>31
	}
	return g
}
