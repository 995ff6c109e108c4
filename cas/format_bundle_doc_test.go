package cas_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Documentation-only mirror of the bundle layout in docs/format.md 5.1,
// written with encoding/binary as a second encoder that shares no code
// with the package.

type docBundleStart struct {
	Magic        [8]byte // "SLVDBNDL"
	Version      uint32  // 1
	HeaderLength uint32  // up to the end of the header checksum
	Count        uint32
}

type docBundleEntryTail struct {
	Offset uint64 // of the pack, from the start of the bundle
	Length uint64
}

// docEncodeBundle lays packs (sorted by name) out as a bundle.
func docEncodeBundle(t *testing.T, packs []cas.NamedPack) []byte {
	t.Helper()
	headerLen := binary.Size(docBundleStart{}) + 32
	for _, p := range packs {
		headerLen += 2 + len(p.Name) + binary.Size(docBundleEntryTail{})
	}
	var b bytes.Buffer
	w := func(v any) {
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	w(docBundleStart{Magic: [8]byte([]byte("SLVDBNDL")), Version: 1, HeaderLength: uint32(headerLen), Count: uint32(len(packs))})
	off := uint64(headerLen)
	for _, p := range packs {
		w(uint16(len(p.Name)))
		b.WriteString(p.Name)
		w(docBundleEntryTail{Offset: off, Length: uint64(len(p.Data))})
		off += uint64(len(p.Data))
	}
	sum := cas.Sum(b.Bytes())
	b.Write(sum[:])
	for _, p := range packs {
		b.Write(p.Data)
	}
	return b.Bytes()
}

// The store's bundle and the mirror encoder agree byte for byte, and the
// file is named after its header checksum.
func TestBundleLayoutMatchesDocumentation(t *testing.T) {
	small, err := os.ReadFile("testdata/v1/small.pack")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := packOf(t, genText(81, 3000))
	packs := []cas.NamedPack{{Name: "1-first.pack", Data: other}, {Name: "2-small.pack", Data: small}}
	dir := t.TempDir()
	// Given out of order: the bundle holds them sorted by name.
	if err := openStore(t, dir).AddPacks([]cas.NamedPack{packs[1], packs[0]}); err != nil {
		t.Fatal(err)
	}
	doc := docEncodeBundle(t, packs)
	headerLen := binary.LittleEndian.Uint32(doc[12:])
	sum := doc[headerLen-32 : headerLen]
	name := hex.EncodeToString(sum[:16]) + ".bundle"
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("no bundle named after its header checksum: %v (files %v)", err, storeFiles(t, dir))
	}
	if !bytes.Equal(got, doc) {
		t.Fatalf("bundle (%d bytes) differs from the documented layout (%d bytes)", len(got), len(doc))
	}
}
