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
	// The first entries, also printed in docs/format.md, for implementers.
	for i, w := range []uint64{0xcb3c6c5e1cc7bada, 0x6299d0ce7164cccd, 0x0a4075ba8218cc87, 0x21f9acc3cee81b1c} {
		if gear[i] != w {
			t.Errorf("gear[%d] = %#016x, want %#016x", i, gear[i], w)
		}
	}
}
