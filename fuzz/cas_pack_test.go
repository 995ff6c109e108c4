package fuzz

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// casSeedPacks returns small valid packs for the fuzzer to mutate: the v1
// and v2 (tree deltas) fixtures of cas/testdata and a pack with zstd
// records. Seeds stay small because the fuzzer minimizes every new input
// it finds, byte by byte.
func casSeedPacks(f *testing.F) [][]byte {
	small, err := os.ReadFile("../cas/testdata/v1/small.pack")
	if err != nil {
		f.Fatal(err)
	}
	delta, err := os.ReadFile("../cas/testdata/v2/delta.pack")
	if err != nil {
		f.Fatal(err)
	}
	w := cas.NewPackWriter()
	notes, _ := cas.WriteFile(w, bytes.Repeat([]byte("a compressible line\n"), 100))
	if _, err := cas.WriteTree(w, map[string]cas.ID{"notes.md": notes}); err != nil {
		f.Fatal(err)
	}
	zstdPack, err := w.Finish()
	if err != nil {
		f.Fatal(err)
	}
	return [][]byte{small, delta, zstdPack}
}

// FuzzOpenPack: no input makes the pack reader panic or hand out an
// object that does not match its ID; a pack that opens and verifies
// serves every object it lists.
func FuzzOpenPack(f *testing.F) {
	for _, p := range casSeedPacks(f) {
		f.Add(p, false)
		f.Add(p, true)
	}
	f.Add([]byte("SLVDPACK"), false)
	f.Fuzz(func(t *testing.T, data []byte, reseal bool) {
		// A mutation almost never survives the trailer checksum; resealing
		// recomputes it so the fuzzer also reaches the index and records.
		if n := len(data) - 32; reseal && n >= 0 {
			data = bytes.Clone(data)
			sum := cas.Sum(data[:n])
			copy(data[n:], sum[:])
		}
		p, err := cas.OpenPack(data)
		if err != nil {
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("OpenPack error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		verr := p.Verify()
		ids := p.IDs()
		for _, id := range ids {
			o, err := p.Get(id)
			if err != nil {
				if verr == nil {
					t.Fatalf("Verify passed but Get failed: %v", err)
				}
				continue
			}
			if cas.Sum(o.Body) != id || o.ID != id {
				t.Fatal("Get returned an object that does not hash to its ID")
			}
		}
		if verr != nil {
			return
		}
		// Whatever verifies re-packs into a pack that verifies.
		w := cas.NewPackWriter()
		for _, id := range ids {
			o, _ := p.Get(id)
			if err := w.Put(o); err != nil {
				t.Fatalf("re-pack: %v", err)
			}
		}
		again, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		q, err := cas.OpenPack(again)
		if err != nil || q.Verify() != nil || !bytes.Equal(idBytes(q.IDs()), idBytes(ids)) {
			t.Fatalf("re-packed pack does not verify: %v", err)
		}
	})
}

func idBytes(ids []cas.ID) []byte {
	var b []byte
	for _, id := range ids {
		b = append(b, id[:]...)
	}
	return b
}
