package history

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// TestBlameIndexBound: past its bound, the index keeps the newest
// publications whole and leaves the oldest out.
func TestBlameIndexBound(t *testing.T) {
	var entries []pathsEntry
	for g := uint64(1); g <= 10; g++ {
		entries = append(entries, pathsEntry{gen: g, head: idFor(g), parent: idFor(g - 1), changes: []pathsChange{{path: "a.md", id: idFor(100 + g)}, {path: fmt.Sprint("f", g), id: idFor(200 + g)}}})
	}
	m, err := decodePathsIndex(encodePathsIndex(entries, 7))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 {
		t.Fatalf("%d entries kept under a bound of 7 paths of 2 per entry, want 3", len(m))
	}
	for g := uint64(8); g <= 10; g++ {
		en, ok := m[g]
		if !ok || en.head != idFor(g) || en.parent != idFor(g-1) || len(en.changes) != 2 || en.changes[1].path != fmt.Sprint("f", g) || en.changes[0].id != idFor(100+g) {
			t.Errorf("entry %d: %+v", g, en)
		}
	}
}

func idFor(n uint64) (id [32]byte) {
	id[0], id[1] = byte(n), byte(n>>8)
	return id
}

// FuzzPathsIndex: the index decoder, fed any bytes (with a checksum that
// fits, so the parser itself is reached), neither panics nor allocates
// beyond what the bytes can hold, and what it accepts encodes again to the
// same entries.
func FuzzPathsIndex(f *testing.F) {
	var entries []pathsEntry
	for g := uint64(1); g <= 3; g++ {
		entries = append(entries, pathsEntry{gen: g, head: idFor(g), parent: idFor(g - 1), changes: []pathsChange{{path: "a.md", id: idFor(10 + g)}}})
	}
	good := encodePathsIndex(entries, maxIndexChanges)
	f.Add(good[len(pathsIndexMagic) : len(good)-32])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		data := append([]byte(pathsIndexMagic), body...)
		sum := cas.Sum(data)
		m, err := decodePathsIndex(append(data, sum[:]...))
		if err != nil {
			return
		}
		var again []pathsEntry
		for _, en := range m {
			again = append(again, en)
		}
		slices.SortFunc(again, func(a, b pathsEntry) int { return cmp.Compare(a.gen, b.gen) })
		m2, err := decodePathsIndex(encodePathsIndex(again, maxIndexChanges))
		if err != nil || len(m2) != len(m) {
			t.Fatalf("re-encoded: %v, %d entries, want %d", err, len(m2), len(m))
		}
		for g, en := range m {
			en2 := m2[g]
			if en2.head != en.head || en2.parent != en.parent || !slices.Equal(en2.changes, en.changes) {
				t.Fatalf("entry %d: %+v, then %+v", g, en, en2)
			}
		}
	})
}
