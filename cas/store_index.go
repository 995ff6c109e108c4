package cas

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
)

// The merged index is a cache of every loaded pack's index in one file,
// sorted by ID, so that opening a store of hundreds of packs reads one
// file instead of opening each pack, and looks objects up by binary search
// instead of building a map of every object. Layout (little-endian):
//
//	"SLDMIDX1"
//	u32 packs,   per pack: u16 name length, name, u64 file size
//	u32 entries, per entry (sorted by ID, unique): ID, u32 pack number,
//	                                               u64 offset, u32 stored length
//	BLAKE3-256 of all preceding bytes
//
// It is only a cache: it is written without fsync (a torn file fails its
// checksum and is ignored), and a pack it lists is used only while a file
// of that name and size is in the directory; otherwise the whole file is
// ignored and every pack is loaded on its own, as without it. A listed
// pack was structurally checked when it was loaded for the index, and
// every object read from it is still verified against its ID.
const (
	mergedIndexName  = ".index" // a dot name: never taken for a pack; not *.tmp: never swept
	mergedIndexMagic = "SLDMIDX1"
	mergedEntrySize  = 32 + 4 + 8 + 4
)

// Rewrite the merged index when opening a store loaded this many packs,
// or this many objects, on their own: below that, loading them costs less
// than rewriting the file.
const (
	mergedRewritePacks   = 8
	mergedRewriteObjects = 1024
)

type mergedIndex struct {
	packs   []*storedPack
	entries []byte // mergedEntrySize each, sorted by ID
}

func (m *mergedIndex) find(id ID) (location, bool) {
	i, ok := searchID(m.entries, mergedEntrySize, id)
	if !ok {
		return location{}, false
	}
	_, loc := m.entry(i)
	return loc, true
}

// entry decodes entry i.
func (m *mergedIndex) entry(i int) (ID, location) {
	e := m.entries[i*mergedEntrySize:]
	var id ID
	copy(id[:], e)
	return id, location{pack: m.packs[le.Uint32(e[32:])], offset: le.Uint64(e[36:]), stored: le.Uint32(e[44:])}
}

var errBadMergedIndex = errors.New("cas: merged index is invalid")

// readMergedIndex reads the merged index of dir and checks its structure;
// a missing or invalid file is an error (the caller ignores the file).
func readMergedIndex(dir string) (*mergedIndex, error) {
	data, err := os.ReadFile(filepath.Join(dir, mergedIndexName))
	if err != nil {
		return nil, err
	}
	return decodeMergedIndex(data)
}

func decodeMergedIndex(data []byte) (*mergedIndex, error) {
	if len(data) < len(mergedIndexMagic)+4+4+32 || string(data[:len(mergedIndexMagic)]) != mergedIndexMagic {
		return nil, errBadMergedIndex
	}
	body := data[:len(data)-32]
	if sum := Sum(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, errBadMergedIndex
	}
	r := reader{b: body[len(mergedIndexMagic):]}
	np := r.u32("packs")
	if r.err != nil || uint64(np) > uint64(len(r.b)/(2+1+8)) {
		return nil, errBadMergedIndex
	}
	m := &mergedIndex{packs: make([]*storedPack, np)}
	seen := make(map[string]bool, np)
	for i := range m.packs {
		name := string(r.take(int(r.u16("name length")), "name"))
		size := r.u64("size")
		if r.err != nil || checkPackName(name) != nil || seen[name] {
			return nil, errBadMergedIndex
		}
		seen[name] = true
		m.packs[i] = &storedPack{name: name, size: int64(size)}
	}
	ne := r.u32("entries")
	if r.err != nil || uint64(ne)*mergedEntrySize != uint64(len(r.b)) {
		return nil, errBadMergedIndex
	}
	m.entries = r.b
	for i := range int(ne) {
		e := m.entries[i*mergedEntrySize:]
		if le.Uint32(e[32:]) >= np || (i > 0 && bytes.Compare(m.entries[(i-1)*mergedEntrySize:][:32], e[:32]) >= 0) {
			return nil, errBadMergedIndex
		}
	}
	return m, nil
}

// useMergedIndexLocked adopts the merged index of the directory if every
// pack it lists is present (in present) with the size it had; it returns
// whether it did.
func (s *Store) useMergedIndexLocked(present map[string]bool) bool {
	m, err := readMergedIndex(s.dir)
	if err != nil {
		return false
	}
	for _, p := range m.packs {
		if !present[p.name] {
			return false
		}
	}
	// Through a Root, each check is one stat relative to the directory
	// instead of a lookup of the whole path.
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return false
	}
	defer root.Close()
	for _, p := range m.packs {
		fi, err := root.Lstat(p.name)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != p.size {
			return false // changed since it was indexed: load every pack on its own
		}
	}
	for _, p := range m.packs {
		s.packs[p.name] = p
	}
	s.midx = m
	return true
}

// writeMergedIndexLocked records every loaded pack's objects in the merged
// index. Failure only costs the next open time, so it is ignored.
func (s *Store) writeMergedIndexLocked() {
	names := make([]string, 0, len(s.packs))
	for name := range s.packs {
		names = append(names, name)
	}
	slices.Sort(names)
	number := make(map[*storedPack]uint32, len(names))
	out := []byte(mergedIndexMagic)
	out = le.AppendUint32(out, uint32(len(names)))
	for i, name := range names {
		p := s.packs[name]
		number[p] = uint32(i)
		out = le.AppendUint16(out, uint16(len(name)))
		out = append(out, name...)
		out = le.AppendUint64(out, uint64(p.size))
	}
	type entry struct {
		id  ID
		loc location
	}
	all := make([]entry, 0, len(s.index)+s.midx.count())
	for id, loc := range s.index {
		all = append(all, entry{id, loc})
	}
	if s.midx != nil {
		for i := range s.midx.count() {
			id, loc := s.midx.entry(i)
			if _, dup := s.index[id]; !dup {
				all = append(all, entry{id, loc})
			}
		}
	}
	slices.SortFunc(all, func(a, b entry) int { return bytes.Compare(a.id[:], b.id[:]) })
	out = le.AppendUint32(out, uint32(len(all)))
	for _, e := range all {
		out = append(out, e.id[:]...)
		out = le.AppendUint32(out, number[e.loc.pack])
		out = le.AppendUint64(out, e.loc.offset)
		out = le.AppendUint32(out, e.loc.stored)
	}
	sum := Sum(out)
	out = append(out, sum[:]...)

	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(s.dir, mergedIndexName+"."+hex.EncodeToString(rnd[:])+".tmp")
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, mergedIndexName)); err != nil {
		os.Remove(tmp)
	}
}

func (m *mergedIndex) count() int {
	if m == nil {
		return 0
	}
	return len(m.entries) / mergedEntrySize
}
