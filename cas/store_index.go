package cas

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The merged index is a cache of every loaded file's objects in one file,
// sorted by ID, so that opening a store of hundreds of packs reads one
// file instead of opening each, and looks objects up by binary search
// instead of building a map of every object. Layout (little-endian):
//
//	"SLDMIDX3"
//	i64 directory mtime (ns), i64 snapshot time (ns), u64 device, u64 inode
//	u32 files,   per file: u16 name length, name, u64 file size,
//	                       u32 bundled packs (0: a plain pack, named by the file),
//	                       per bundled pack: u16 name length, name
//	u32 entries, per entry (sorted by ID, unique): ID, u32 file number,
//	                                               u64 offset in the file, u32 stored length
//	BLAKE3-256 of all preceding bytes
//
// It is only a cache: it is written in place without fsync (a torn or
// half-written file fails its checksum and is ignored). It is trusted in
// one of two ways:
//
//   - By the directory's identity, with no listing and no stat of any
//     file: the second line records the directory's modification time,
//     device and inode as stat'ed just before the listing the index was
//     built from, and when that stat was taken. If the directory still has
//     that identity, no entry was created, removed or renamed in it since
//     (each changes the directory's mtime), so it holds exactly the listed
//     files: the writer records an identity only when the listing held no
//     file that failed to load and no temporary file. A snapshot taken
//     within racyWindow of the mtime is not trusted: a change in the same
//     timestamp tick would keep the mtime (git's racy rule), so its
//     identity is recorded but never matches. The index is overwritten in
//     place, not renamed, so that writing it does not itself change the
//     directory's mtime. An inode of 0 (unknown, or not a Unix system)
//     never matches. What the identity cannot see, a file changed in place
//     (truncated, a bad disk), is what per-object verification catches:
//     every object read is checked against its ID, and a read past a
//     truncated file's end is ErrTruncated, so the caller drops the file
//     and fetches it again, as for damage that keeps the size.
//   - Otherwise, by listing the directory: a file it lists is used only
//     while a file of that name and size is there; otherwise the whole
//     index is ignored and every file is loaded on its own, as without it.
//
// A listed file was structurally checked when it was loaded for the index,
// and every object read from it is still verified against its ID. An index
// of an older layout ("SLDMIDX1" before bundles, "SLDMIDX2" before the
// directory's identity) is ignored and rewritten.
const (
	mergedIndexName  = ".index" // a dot name: never taken for a pack; not *.tmp: never swept
	mergedIndexMagic = "SLDMIDX3"
	mergedIdentSize  = 8 + 8 + 8 + 8
	mergedEntrySize  = 32 + 4 + 8 + 4
)

// Rewrite the merged index when opening a store loaded this many files,
// or this many objects, on their own: below that, loading them costs less
// than rewriting the file.
const (
	mergedRewritePacks   = 8
	mergedRewriteObjects = 1024
)

type mergedIndex struct {
	ident   dirSnapshot // of the listing the index was built from
	files   []*storedFile
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
	return id, location{file: m.files[le.Uint32(e[32:])], offset: le.Uint64(e[36:]), stored: le.Uint32(e[44:])}
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
	if len(data) < len(mergedIndexMagic)+mergedIdentSize+4+4+32 || string(data[:len(mergedIndexMagic)]) != mergedIndexMagic {
		return nil, errBadMergedIndex
	}
	body := data[:len(data)-32]
	if sum := Sum(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, errBadMergedIndex
	}
	r := reader{b: body[len(mergedIndexMagic):]}
	var ident dirSnapshot
	ident.mtime = int64(r.u64("directory mtime"))
	ident.at = int64(r.u64("snapshot time"))
	ident.dev = r.u64("device")
	ident.ino = r.u64("inode")
	nf := r.u32("files")
	if r.err != nil || uint64(nf) > uint64(len(r.b)/(2+1+8+4)) {
		return nil, errBadMergedIndex
	}
	m := &mergedIndex{ident: ident, files: make([]*storedFile, nf)}
	seen := make(map[string]bool, nf)
	for i := range m.files {
		f := &storedFile{name: string(r.take(int(r.u16("name length")), "name"))}
		f.size = int64(r.u64("size"))
		np := r.u32("bundled packs")
		if r.err != nil || seen[f.name] || isBundleName(f.name) != (np > 0) || uint64(np) > uint64(len(r.b)/3) ||
			checkPackName(strings.TrimSuffix(f.name, bundleSuffix)) != nil {
			return nil, errBadMergedIndex
		}
		for range np {
			name := string(r.take(int(r.u16("bundled name length")), "bundled name"))
			if r.err != nil || checkPackName(name) != nil || (len(f.packs) > 0 && f.packs[len(f.packs)-1] >= name) {
				return nil, errBadMergedIndex
			}
			f.packs = append(f.packs, name)
		}
		seen[f.name] = true
		m.files[i] = f
	}
	ne := r.u32("entries")
	if r.err != nil || uint64(ne)*mergedEntrySize != uint64(len(r.b)) {
		return nil, errBadMergedIndex
	}
	m.entries = r.b
	for i := range int(ne) {
		e := m.entries[i*mergedEntrySize:]
		if le.Uint32(e[32:]) >= nf || (i > 0 && bytes.Compare(m.entries[(i-1)*mergedEntrySize:][:32], e[:32]) >= 0) {
			return nil, errBadMergedIndex
		}
	}
	return m, nil
}

// dirSnapshot is a directory's identity as stat'ed before a listing, and
// when (Unix ns).
type dirSnapshot struct {
	mtime, at int64
	dev, ino  uint64
}

func snapshotOf(fi os.FileInfo, at time.Time) dirSnapshot {
	dev, ino := dirIdentity(fi)
	return dirSnapshot{mtime: fi.ModTime().UnixNano(), at: at.UnixNano(), dev: dev, ino: ino}
}

// quiet reports whether the directory was last changed at least d before
// the snapshot was taken.
func (d dirSnapshot) quiet(window time.Duration) bool {
	return d.at-d.mtime > int64(window)
}

// vouches reports whether an index built from listing snapshot d proves
// the directory's content now that it has identity now.
func (d dirSnapshot) vouches(now dirSnapshot) bool {
	return d.ino != 0 && d.ino == now.ino && d.dev == now.dev && d.mtime == now.mtime && d.quiet(racyWindow)
}

// useTrustedMergedIndexLocked adopts m, the merged index of the
// directory, without listing the directory if m's snapshot vouches for the
// directory's identity now; it returns whether it did.
func (s *Store) useTrustedMergedIndexLocked(m *mergedIndex, now dirSnapshot) bool {
	if m == nil || !m.ident.vouches(now) {
		return false
	}
	s.adoptLocked(m)
	s.scannedMtime, s.scannedAt = time.Unix(0, m.ident.mtime), time.Unix(0, m.ident.at)
	return true
}

func (s *Store) adoptLocked(m *mergedIndex) {
	for i, f := range m.files {
		m.files[i] = s.addFileLocked(f)
	}
	s.midx = m
}

// useMergedIndexLocked adopts m, the merged index of the directory, if
// every file it lists is present (in present) with the size it had; it
// returns whether it did.
func (s *Store) useMergedIndexLocked(m *mergedIndex, present map[string]bool) bool {
	if m == nil {
		return false
	}
	for _, f := range m.files {
		if !present[f.name] {
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
	for _, f := range m.files {
		fi, err := root.Lstat(f.name)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.size {
			return false // changed since it was indexed: load every file on its own
		}
	}
	s.adoptLocked(m)
	return true
}

// writeMergedIndexLocked records every loaded file's objects in the merged
// index, with ident, the snapshot of the listing they were loaded from
// (zero if that listing is not exactly the loaded files). Failure only
// costs the next open time, so it is ignored.
func (s *Store) writeMergedIndexLocked(ident dirSnapshot) {
	names := make([]string, 0, len(s.files))
	for name := range s.files {
		names = append(names, name)
	}
	slices.Sort(names)
	number := make(map[*storedFile]uint32, len(names))
	out := []byte(mergedIndexMagic)
	out = le.AppendUint64(out, uint64(ident.mtime))
	out = le.AppendUint64(out, uint64(ident.at))
	out = le.AppendUint64(out, ident.dev)
	out = le.AppendUint64(out, ident.ino)
	out = le.AppendUint32(out, uint32(len(names)))
	for i, name := range names {
		f := s.files[name]
		number[f] = uint32(i)
		out = le.AppendUint16(out, uint16(len(name)))
		out = append(out, name...)
		out = le.AppendUint64(out, uint64(f.size))
		out = le.AppendUint32(out, uint32(len(f.packs)))
		for _, p := range f.packs {
			out = le.AppendUint16(out, uint16(len(p)))
			out = append(out, p...)
		}
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
		out = le.AppendUint32(out, number[e.loc.file])
		out = le.AppendUint64(out, e.loc.offset)
		out = le.AppendUint32(out, e.loc.stored)
	}
	sum := Sum(out)
	out = append(out, sum[:]...)

	_ = overwriteFile(filepath.Join(s.dir, mergedIndexName), out) // best effort: a missing index is rebuilt
}

// overwriteFile writes data over the file at path in place (creating it if
// needed): unlike a rename, rewriting an existing file leaves its
// directory's mtime alone. A reader that sees it half-written fails the
// checksum.
func overwriteFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (m *mergedIndex) count() int {
	if m == nil {
		return 0
	}
	return len(m.entries) / mergedEntrySize
}
