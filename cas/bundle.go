package cas

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Bundle layout, version 1 (docs/format.md, "Bundles"): several packs in
// one file of the local store, each still a complete v1 pack.
//
//	header  magic "SLVDBNDL" | version u32 | header length u32 | pack count u32
//	        per pack, sorted by name: name length u16 | name | offset u64 | length u64
//	        BLAKE3-256 of the header bytes before it
//	packs   back to back in header order: the first at the header length,
//	        each at the previous one's end, the last ending the file
const (
	bundleMagic   = "SLVDBNDL"
	bundleVersion = 1
	// bundleSuffix ends every bundle's file name and no pack name, so a
	// bundle's file can never be mistaken for, or replaced by, a pack.
	bundleSuffix = ".bundle"

	bundleFixedSize = 8 + 4 + 4 + 4
	bundleEntryMin  = 2 + 1 + 8 + 8
	// bundleMaxHeader bounds what a reader allocates for a header before
	// its checksum is known: far above 65,535 names of 255 bytes.
	bundleMaxHeader = 1 << 25
)

// NamedPack is a pack's bytes and the name the store keeps it under.
type NamedPack struct {
	Name string
	Data []byte
}

// bundledPack is one entry of a bundle header: where pack name lies.
type bundledPack struct {
	name           string
	offset, length uint64
}

func isBundleName(name string) bool { return strings.HasSuffix(name, bundleSuffix) }

// encodeBundleHeader returns the header of a bundle of packs, which must be
// sorted by name, distinct, and at least one.
func encodeBundleHeader(packs []NamedPack) []byte {
	size := bundleFixedSize + 32
	for _, p := range packs {
		size += 2 + len(p.Name) + 8 + 8
	}
	h := make([]byte, 0, size)
	h = append(h, bundleMagic...)
	h = le.AppendUint32(h, bundleVersion)
	h = le.AppendUint32(h, uint32(size))
	h = le.AppendUint32(h, uint32(len(packs)))
	off := uint64(size)
	for _, p := range packs {
		h = le.AppendUint16(h, uint16(len(p.Name)))
		h = append(h, p.Name...)
		h = le.AppendUint64(h, off)
		h = le.AppendUint64(h, uint64(len(p.Data)))
		off += uint64(len(p.Data))
	}
	sum := Sum(h)
	return append(h, sum[:]...)
}

// bundleHeaderLength checks the fixed start of a bundle (at least
// bundleFixedSize bytes of a file of size bytes) and returns the length of
// its whole header.
func bundleHeaderLength(start []byte, size int64) (int, error) {
	if len(start) >= 8 && string(start[:8]) != bundleMagic {
		return 0, corruptf("not a bundle (bad magic)")
	}
	if len(start) >= 12 {
		if v := le.Uint32(start[8:]); v != bundleVersion {
			return 0, fmt.Errorf("bundle version %d: %w", v, ErrUnsupportedVersion)
		}
	}
	if len(start) < bundleFixedSize {
		return 0, fmt.Errorf("bundle of %d bytes: %w", size, ErrTruncated)
	}
	n := int64(le.Uint32(start[12:]))
	if n < bundleFixedSize+bundleEntryMin+32 || n > bundleMaxHeader {
		return 0, corruptf("bundle header length %d", n)
	}
	if size < n {
		return 0, fmt.Errorf("bundle of %d bytes, header of %d: %w", size, n, ErrTruncated)
	}
	return int(n), nil
}

// decodeBundleHeader checks a whole bundle header against its checksum
// and the size of its file, and returns its entries. Names must be valid
// pack names in strictly increasing order and the packs must tile the
// rest of the file exactly, so that no byte of a bundle is unaccounted
// for and every header has one encoding.
func decodeBundleHeader(h []byte, size int64) ([]bundledPack, error) {
	n, err := bundleHeaderLength(h, size)
	if err != nil {
		return nil, err
	}
	if len(h) != n {
		return nil, corruptf("bundle header of %d bytes, declared %d", len(h), n)
	}
	body := h[:n-32]
	if Sum(body) != ID(h[n-32:]) {
		return nil, corruptf("bundle header checksum mismatch")
	}
	r := reader{b: body[bundleFixedSize:]}
	count := le.Uint32(body[16:])
	if count == 0 || uint64(count) > uint64(len(r.b)/bundleEntryMin) {
		return nil, corruptf("bundle of %d packs in a header of %d bytes", count, n)
	}
	packs := make([]bundledPack, count)
	next := uint64(n)
	for i := range packs {
		name := string(r.take(int(r.u16("bundle pack name length")), "bundle pack name"))
		p := bundledPack{name: name, offset: r.u64("bundle pack offset"), length: r.u64("bundle pack length")}
		if r.err != nil {
			return nil, r.err
		}
		if err := checkPackName(name); err != nil {
			return nil, corruptf("bundle pack name %q", name)
		}
		if i > 0 && packs[i-1].name >= name {
			return nil, corruptf("bundle packs are not sorted by name at entry %d", i)
		}
		if p.offset != next || p.length < packMinSize {
			return nil, corruptf("bundle pack %q at %d, %d bytes, does not follow at %d", name, p.offset, p.length, next)
		}
		if p.length > uint64(size)-next { // next <= size holds by induction
			return nil, fmt.Errorf("bundle pack %q ends past the file's %d bytes: %w", name, size, ErrTruncated)
		}
		next += p.length
		packs[i] = p
	}
	if err := r.done("bundle header"); err != nil {
		return nil, err
	}
	if next != uint64(size) {
		return nil, corruptf("bundle packs end at %d, the file at %d", next, size)
	}
	return packs, nil
}

// readBundleHeader reads and checks the header of the bundle file f of
// size bytes.
func readBundleHeader(f *os.File, size int64) ([]bundledPack, error) {
	// One read serves the header of a bundle of up to ~50 packs.
	buf := make([]byte, min(size, 4096))
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	n, err := bundleHeaderLength(buf, size)
	if err != nil {
		return nil, err
	}
	if n > len(buf) {
		buf = make([]byte, n)
		if _, err := f.ReadAt(buf, 0); err != nil {
			return nil, err
		}
	}
	return decodeBundleHeader(buf[:n], size)
}
