package history

// The changed-paths index: per store, in P (P/stores/<key>/changed-paths),
// for each retained publication, the files it changed and their IDs after
// it. A blame's walk needs, for the walked file, only the publications
// that changed it; finding them without the index costs a commit and a
// path lookup (the root tree and the trees on the path) per publication,
// for any file. With the index, the walk reads the versions of the file
// that changed and nothing else, and one index serves every file.
//
// The first walk that misses an entry computes it (a tree diff of the
// publication's parent and head, which reads only the subtrees that
// differ) and the walk rewrites the file with what it computed; later
// walks compute only the publications accepted since. An entry names its
// publication's generation, parent and head: it is used only when those
// are the parent and head that the store's history lists for that
// generation, so an entry of another store (one replaced at the URL) or of
// a history rewritten since is recomputed, never believed. Heads are
// content addresses: the same parent and head have the same changes. The
// file ends in the BLAKE3 of its preceding bytes; a file that is torn,
// damaged or of another format is ignored whole and rebuilt. Losing it
// costs one walk's time.
//
// Bound: the file holds at most maxIndexChanges changed paths (about
// 40 MB at most; 10,000 publications of one or two files each take about
// 1 MB). Beyond it, the oldest publications are left out of the file, and
// each walk that reaches them computes their changes again.
//
// Format (version 1): "SLDPATH1"; uvarint count of paths, then each path
// (uvarint length, bytes); uvarint count of entries, then each entry:
// uvarint generation, a flags byte (1: the parent follows; without it the
// parent is the previous entry's head), [parent, 32 bytes], head (32
// bytes), uvarint count of changes, then each change: uvarint index of its
// path, the file's ID after the publication (32 bytes; all zero when no
// file is there any more). Then the BLAKE3 of all the preceding bytes.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

const (
	pathsIndexMagic = "SLDPATH1"
	// maxIndexChanges bounds the changed paths the index file holds.
	maxIndexChanges = 1 << 20
)

// pathsEntry is what one publication changed.
type pathsEntry struct {
	gen          uint64
	parent, head cas.ID
	changes      []pathsChange
}

// pathsChange is one file a publication changed and its ID after it (zero:
// removed, or no longer a file).
type pathsChange struct {
	path string
	id   cas.ID
}

// IndexFile is the changed-paths index of the store whose directory in P
// is dir.
func IndexFile(dir string) string { return filepath.Join(dir, "changed-paths") }

// IndexLen is the number of publications the changed-paths index under
// dir holds: 0 when it is absent or does not decode (tests, diagnosis).
func IndexLen(dir string) int { return len(loadPathsIndex(IndexFile(dir))) }

// changedPaths returns, for each publication of pubs (a chain, oldest
// first), the files it changed: from the index where its entry names the
// same parent and head, else computed from the trees; the index is
// rewritten when it lacked or held entries that differ from what pubs
// needs. computed counts the publications whose changes were computed.
func (h *View) changedPaths(src cas.Source, pubs []Publication) (out [][]pathsChange, computed int, err error) {
	name := IndexFile(h.dir)
	index := loadPathsIndex(name)
	out = make([][]pathsChange, len(pubs))
	var prevHead, prevTree cas.ID
	treeOf := func(head cas.ID) (cas.ID, error) {
		if head.IsZero() {
			return cas.ID{}, nil
		}
		if head == prevHead {
			return prevTree, nil
		}
		c, err := cas.ReadCommit(src, head)
		return c.Tree, err
	}
	for i, p := range pubs {
		if i%256 == 0 {
			if err := h.ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		if en, ok := index[p.Generation]; ok && en.parent == p.Parent && en.head == p.Head {
			out[i] = en.changes
			continue
		}
		a, err := treeOf(p.Parent)
		if err != nil {
			return nil, 0, err
		}
		b, err := treeOf(p.Head)
		if err != nil {
			return nil, 0, err
		}
		prevHead, prevTree = p.Head, b
		var diff []pathChange
		if err := diffTrees(src, a, b, "", "", &diff); err != nil {
			return nil, 0, err
		}
		changes := make([]pathsChange, len(diff))
		for k, d := range diff {
			changes[k] = pathsChange{path: d.path, id: d.new}
		}
		out[i] = changes
		computed++
	}
	if computed > 0 || len(index) != len(pubs) {
		entries := make([]pathsEntry, len(pubs))
		for i, p := range pubs {
			entries[i] = pathsEntry{gen: p.Generation, parent: p.Parent, head: p.Head, changes: out[i]}
		}
		if err := pstate.WriteReplace(name, encodePathsIndex(entries, maxIndexChanges), false); err != nil {
			h.log.Info("blame: the changed-paths index was not written", "err", err)
		}
	}
	return out, computed, nil
}

// encodePathsIndex encodes entries (oldest first), leaving out the oldest
// ones beyond bound changed paths.
func encodePathsIndex(entries []pathsEntry, bound int) []byte {
	n, from := 0, len(entries)
	for from > 0 && n+len(entries[from-1].changes) <= bound {
		from--
		n += len(entries[from].changes)
	}
	entries = entries[from:]
	ids := map[string]uint64{}
	var paths []string
	for _, en := range entries {
		for _, c := range en.changes {
			if _, ok := ids[c.path]; !ok {
				ids[c.path] = uint64(len(paths))
				paths = append(paths, c.path)
			}
		}
	}
	b := []byte(pathsIndexMagic)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	b = binary.AppendUvarint(b, uint64(len(entries)))
	var prev cas.ID
	for i, en := range entries {
		b = binary.AppendUvarint(b, en.gen)
		if i > 0 && en.parent == prev {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			b = append(b, en.parent[:]...)
		}
		b = append(b, en.head[:]...)
		prev = en.head
		b = binary.AppendUvarint(b, uint64(len(en.changes)))
		for _, c := range en.changes {
			b = binary.AppendUvarint(b, ids[c.path])
			b = append(b, c.id[:]...)
		}
	}
	sum := cas.Sum(b)
	return append(b, sum[:]...)
}

var errBadPathsIndex = errors.New("history: changed-paths index is corrupt")

// loadPathsIndex reads the index file name, by generation; nil when it is
// absent or does not decode.
func loadPathsIndex(name string) map[uint64]pathsEntry {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	m, err := decodePathsIndex(data)
	if err != nil {
		return nil
	}
	return m
}

func decodePathsIndex(data []byte) (map[uint64]pathsEntry, error) {
	if len(data) < len(pathsIndexMagic)+32 || !bytes.HasPrefix(data, []byte(pathsIndexMagic)) {
		return nil, errBadPathsIndex
	}
	body := data[:len(data)-32]
	if sum := cas.Sum(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, errBadPathsIndex
	}
	r := indexReader{b: body[len(pathsIndexMagic):]}
	np := r.count(1)
	paths := make([]string, np)
	for i := range paths {
		paths[i] = string(r.bytes(int(r.count(1))))
	}
	ne := r.count(33)
	m := make(map[uint64]pathsEntry, ne)
	// The entries' changes share one array, each entry's a full slice of
	// it (an append by a caller copies): ten thousand entries otherwise
	// make ten thousand small allocations. Its size is what the bytes
	// left can hold at 33 bytes a change, and no more than the bound.
	all := make([]pathsChange, 0, min(len(r.b)/33, maxIndexChanges))
	var prev cas.ID
	for i := uint64(0); i < ne && r.err == nil; i++ {
		en := pathsEntry{gen: r.uvarint()}
		switch flags := r.bytes(1); {
		case r.err != nil:
		case flags[0] == 1:
			en.parent = r.id()
		case flags[0] == 0 && i > 0:
			en.parent = prev
		default:
			r.err = errBadPathsIndex
		}
		en.head = r.id()
		prev = en.head
		nc := r.count(33)
		from := len(all)
		for range nc {
			k := r.uvarint()
			if r.err == nil && k >= uint64(len(paths)) {
				r.err = errBadPathsIndex
			}
			if r.err != nil {
				break
			}
			all = append(all, pathsChange{path: paths[k], id: r.id()})
		}
		en.changes = all[from:len(all):len(all)]
		m[en.gen] = en
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errBadPathsIndex
	}
	return m, nil
}

// indexReader reads the index's fields; the first error sticks.
type indexReader struct {
	b   []byte
	err error
}

func (r *indexReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBadPathsIndex
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items of at least size bytes each, refusing one
// that the bytes left cannot hold.
func (r *indexReader) count(size int) uint64 {
	v := r.uvarint()
	if r.err == nil && v > uint64(len(r.b)/size) {
		r.err = errBadPathsIndex
		return 0
	}
	return v
}

func (r *indexReader) bytes(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = errBadPathsIndex
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *indexReader) id() cas.ID {
	var id cas.ID
	copy(id[:], r.bytes(32))
	return id
}
