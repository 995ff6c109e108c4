package cas_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Any single flipped bit anywhere in a pack is detected when it is opened,
// in a version-1 pack as in the version-2 fixture with tree deltas.
func TestPackEveryFlippedBitIsDetected(t *testing.T) {
	small, _ := smallPack(t)
	delta, err := os.ReadFile("testdata/v2/delta.pack")
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{small, delta} {
		t.Logf("pack of %d bytes, %d bit flips", len(data), 8*len(data))
		for i := range data {
			for bit := range 8 {
				bad := bytes.Clone(data)
				bad[i] ^= 1 << bit
				if _, err := cas.OpenPack(bad); !errors.Is(err, cas.ErrCorrupt) {
					t.Fatalf("flip of bit %d at byte %d: OpenPack error = %v, want ErrCorrupt", bit, i, err)
				}
			}
		}
	}
}

// Every proper prefix of a pack is refused as truncated.
func TestPackTruncationIsReported(t *testing.T) {
	data, _ := smallPack(t)
	for n := range len(data) {
		_, err := cas.OpenPack(data[:n])
		if !errors.Is(err, cas.ErrTruncated) || !errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("pack cut to %d of %d bytes: error = %v, want ErrTruncated", n, len(data), err)
		}
	}
}

func TestPackTrailingBytesAreCorrupt(t *testing.T) {
	data, _ := smallPack(t)
	_, err := cas.OpenPack(append(bytes.Clone(data), 0))
	if !errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrTruncated) {
		t.Fatalf("pack with a trailing byte: error = %v, want ErrCorrupt, not truncated", err)
	}
}

// reseal recomputes a pack's trailer checksum after a test modified it, to
// reach the checks behind the checksum.
func reseal(data []byte) []byte {
	n := len(data) - 32
	sum := cas.Sum(data[:n])
	copy(data[n:], sum[:])
	return data
}

// recordOffset finds id's record through the pack's trailer and index
// (docs/format.md: trailer = index offset u64, count u32, flags u32, sum;
// index entry = ID, offset u64, stored length u32).
func recordOffset(t *testing.T, data []byte, id cas.ID) int {
	t.Helper()
	tr := data[len(data)-48:]
	off, n := binary.LittleEndian.Uint64(tr), int(binary.LittleEndian.Uint32(tr[8:]))
	for i := range n {
		e := data[int(off)+44*i:]
		if bytes.Equal(e[:32], id[:]) {
			return int(binary.LittleEndian.Uint64(e[32:]))
		}
	}
	t.Fatal("ID not in the pack index")
	return 0
}

// Versions 1 and 2 are read; any other is refused as a newer format
// (or no format), never guessed at.
func TestPackUnknownVersionIsRefused(t *testing.T) {
	data, _ := smallPack(t)
	for _, v := range []uint32{0, 3, 1 << 31} {
		bad := bytes.Clone(data)
		binary.LittleEndian.PutUint32(bad[8:], v)
		_, err := cas.OpenPack(reseal(bad))
		if !errors.Is(err, cas.ErrUnsupportedVersion) {
			t.Fatalf("version %d pack: error = %v, want ErrUnsupportedVersion", v, err)
		}
	}
}

// Behind a valid checksum, a changed object body is still caught by the
// ID check on decode: a pack written by a faulty writer, or one whose
// checksum was not verified (Store reopening its own packs), cannot hand
// out a wrong object.
func TestPackObjectIDIsVerifiedOnDecode(t *testing.T) {
	data, objs := smallPack(t)
	for _, o := range objs {
		bad := bytes.Clone(data)
		bad[recordOffset(t, data, o.ID)+42] ^= 0x01 // first stored byte of the record
		p, err := cas.OpenPack(reseal(bad))
		if err != nil {
			t.Fatalf("resealed pack refused: %v", err)
		}
		if _, err := p.Get(o.ID); !errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("%v object with a changed byte: Get error = %v, want ErrCorrupt", o.Kind, err)
		}
		if err := p.Verify(); !errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("%v object with a changed byte: Verify error = %v, want ErrCorrupt", o.Kind, err)
		}
	}
}

// Something that is not a pack says so, even when it is short, rather
// than claiming to be a truncated pack.
func TestNotAPackIsCorrupt(t *testing.T) {
	for name, data := range map[string][]byte{
		"text":       []byte("this is not a pack, but it is long enough to hold a header and a trailer......................"),
		"zeros":      make([]byte, 200),
		"short text": []byte("not a pack"),
	} {
		if _, err := cas.OpenPack(data); !errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrTruncated) {
			t.Errorf("%s: error = %v, want ErrCorrupt but not ErrTruncated", name, err)
		}
	}
}

// Behind a valid checksum, the index must still describe the records
// exactly: sorted IDs, records tiling the space between header and index.
func TestPackIndexStructureIsChecked(t *testing.T) {
	data, objs := smallPack(t)
	tr := len(data) - 48
	indexOff := int(binary.LittleEndian.Uint64(data[tr:]))
	mutations := map[string]func(b []byte){
		"offset moved by one": func(b []byte) {
			binary.LittleEndian.PutUint64(b[indexOff+32:], binary.LittleEndian.Uint64(b[indexOff+32:])+1)
		},
		"stored length off by one": func(b []byte) {
			binary.LittleEndian.PutUint32(b[indexOff+40:], binary.LittleEndian.Uint32(b[indexOff+40:])+1)
		},
		"entries swapped": func(b []byte) {
			e0 := bytes.Clone(b[indexOff : indexOff+44])
			copy(b[indexOff:], b[indexOff+44:indexOff+88])
			copy(b[indexOff+44:], e0)
		},
		"count too small":    func(b []byte) { binary.LittleEndian.PutUint32(b[tr+8:], uint32(len(objs)-1)) },
		"count zero":         func(b []byte) { binary.LittleEndian.PutUint32(b[tr+8:], 0) },
		"index offset moved": func(b []byte) { binary.LittleEndian.PutUint64(b[tr:], uint64(indexOff+44)) },
		"trailer flags":      func(b []byte) { b[tr+12] = 1 },
		"header flags":       func(b []byte) { b[12] = 1 },
	}
	for name, mutate := range mutations {
		bad := bytes.Clone(data)
		mutate(bad)
		if _, err := cas.OpenPack(reseal(bad)); !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("%s: OpenPack error = %v, want ErrCorrupt", name, err)
		}
	}
}
