package workdir

import (
	"bytes"
	"encoding/binary"
	"errors"
	"iter"
	"slices"
	"unsafe"
)

// StatCache is the stat cache: one Entry per file of L, by path.
//
// It is read the way git reads its index. As loaded from P it is the
// encoded entries in increasing path order, searched in place: a scan finds
// each directory's run of entries (every path under a prefix is contiguous
// in path order) and each listed name within it, so a call that changes
// nothing decodes only the entries it looks at and builds no map of every
// path. The entries set or deleted since loading are kept apart (an
// overlay, empty on a no-op call) and merged into the order when the cache
// is encoded again. The zero value is an empty cache.
//
// A StatCache is read by a scan's goroutines at once; Set and Delete are
// the caller's alone (no scan running).
type StatCache struct {
	sorted []byte   // encoded entries (AppendEntries' layout), paths strictly increasing
	offs   []uint32 // start of each entry in sorted
	keys   string   // sorted as a string: keys are substrings of it, not copies
	over   map[string]Entry
	gone   map[string]struct{} // entries of sorted deleted since loading
	n      int                 // entries in all
	// unordered: loaded from entries an earlier version wrote in map
	// order, to be written again in order (Listing.Changed says so).
	unordered bool
}

// One encoded entry: path length (big-endian uint16), path, size, mtime,
// ctime, inode, device (big-endian uint64 each), file ID (32 bytes), flags
// (1: trusted, 2: conflict markers).
const entryFixed = 2 + 5*8 + 32 + 1

var errBadStatCache = errors.New("workdir: stat cache entries are malformed")

// NewStatCache returns an empty cache.
func NewStatCache() *StatCache { return &StatCache{} }

// DecodeStatCache takes n entries encoded by AppendEntries (or, in any
// order, by an earlier version) from data, which it keeps: data must not be
// changed afterwards. Entries in increasing path order are searched in
// place; any other order is loaded into a map, as before.
func DecodeStatCache(data []byte, n int) (*StatCache, error) {
	if n < 0 || n > len(data)/entryFixed {
		return nil, errBadStatCache
	}
	c := &StatCache{sorted: data, offs: make([]uint32, 0, n), n: n}
	c.keys = frozen(data)
	var prev []byte
	inOrder := true
	off := 0
	for range n {
		if len(data)-off < 2 {
			return nil, errBadStatCache
		}
		l := int(binary.BigEndian.Uint16(data[off:]))
		if len(data)-off < entryFixed+l {
			return nil, errBadStatCache
		}
		p := data[off+2 : off+2+l]
		if inOrder && prev != nil && bytes.Compare(prev, p) >= 0 {
			inOrder = false
		}
		prev = p
		c.offs = append(c.offs, uint32(off))
		off += entryFixed + l
	}
	if off != len(data) {
		return nil, errBadStatCache
	}
	if !inOrder {
		// Written in map order by an earlier version: searched as a map
		// until the next save writes it in order.
		over := make(map[string]Entry, n)
		for i := range c.offs {
			e := c.entryAt(i)
			over[e.Key] = e
		}
		return &StatCache{over: over, n: len(over), unordered: true}, nil
	}
	return c, nil
}

// frozen returns b as a string without copying it (b is never written
// again).
func frozen(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// keyAt is the path of sorted entry i.
func (c *StatCache) keyAt(i int) string {
	off := int(c.offs[i])
	l := int(binary.BigEndian.Uint16(c.sorted[off:]))
	return c.keys[off+2 : off+2+l]
}

// entryAt decodes sorted entry i.
func (c *StatCache) entryAt(i int) Entry {
	off := int(c.offs[i])
	l := int(binary.BigEndian.Uint16(c.sorted[off:]))
	b := c.sorted[off+2+l:]
	e := Entry{
		Key:   c.keys[off+2 : off+2+l],
		Size:  int64(binary.BigEndian.Uint64(b[0:])),
		Mtime: int64(binary.BigEndian.Uint64(b[8:])),
		Ctime: int64(binary.BigEndian.Uint64(b[16:])),
		Ino:   binary.BigEndian.Uint64(b[24:]),
		Dev:   binary.BigEndian.Uint64(b[32:]),
	}
	copy(e.ID[:], b[40:72])
	e.Trusted, e.Markers = b[72]&1 != 0, b[72]&2 != 0
	return e
}

// search returns the index of the first sorted entry in [lo, hi) whose
// path, past its first skip bytes (shared by every path in the range), is
// not less than rest.
func (c *StatCache) search(lo, hi, skip int, rest string) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.keyAt(m)[skip:] < rest {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Len is the number of entries.
func (c *StatCache) Len() int { return c.n }

// Get returns the entry of path p.
func (c *StatCache) Get(p string) (Entry, bool) {
	if e, ok := c.over[p]; ok {
		return e, true
	}
	if _, ok := c.gone[p]; ok {
		return Entry{}, false
	}
	if i := c.search(0, len(c.offs), 0, p); i < len(c.offs) && c.keyAt(i) == p {
		return c.entryAt(i), true
	}
	return Entry{}, false
}

// inSorted reports whether p is an entry of the sorted run (deleted or not).
func (c *StatCache) inSorted(p string) bool {
	i := c.search(0, len(c.offs), 0, p)
	return i < len(c.offs) && c.keyAt(i) == p
}

// Set records p's entry (its Key is set to p).
func (c *StatCache) Set(p string, e Entry) {
	if _, ok := c.Get(p); !ok {
		c.n++
	}
	if c.over == nil {
		c.over = map[string]Entry{}
	}
	e.Key = p
	c.over[p] = e
	delete(c.gone, p)
}

// Delete forgets p's entry.
func (c *StatCache) Delete(p string) {
	if _, ok := c.Get(p); !ok {
		return
	}
	c.n--
	delete(c.over, p)
	if c.inSorted(p) {
		if c.gone == nil {
			c.gone = map[string]struct{}{}
		}
		c.gone[p] = struct{}{}
	}
}

// All yields every entry in increasing path order.
func (c *StatCache) All() iter.Seq2[string, Entry] {
	return func(yield func(string, Entry) bool) {
		var extra []string // overlay paths, in order
		for p := range c.over {
			extra = append(extra, p)
		}
		slices.Sort(extra)
		j := 0
		for i := range c.offs {
			k := c.keyAt(i)
			for ; j < len(extra) && extra[j] < k; j++ {
				if !yield(extra[j], c.over[extra[j]]) {
					return
				}
			}
			if _, ok := c.gone[k]; ok {
				continue
			}
			if _, ok := c.over[k]; ok {
				continue // yielded from the overlay, in its place
			}
			if !yield(k, c.entryAt(i)) {
				return
			}
		}
		for ; j < len(extra); j++ {
			if !yield(extra[j], c.over[extra[j]]) {
				return
			}
		}
	}
}

// AppendEntries appends every entry, in increasing path order, in the
// layout DecodeStatCache reads.
func (c *StatCache) AppendEntries(b []byte) []byte {
	c.unordered = false // once written in order
	if len(c.over) == 0 && len(c.gone) == 0 {
		return append(b, c.sorted...) // unchanged since loading
	}
	for p, s := range c.All() {
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
		b = append(b, p...)
		b = binary.BigEndian.AppendUint64(b, uint64(s.Size))
		b = binary.BigEndian.AppendUint64(b, uint64(s.Mtime))
		b = binary.BigEndian.AppendUint64(b, uint64(s.Ctime))
		b = binary.BigEndian.AppendUint64(b, s.Ino)
		b = binary.BigEndian.AppendUint64(b, s.Dev)
		b = append(b, s.ID[:]...)
		var flags byte
		if s.Trusted {
			flags |= 1
		}
		if s.Markers {
			flags |= 2
		}
		b = append(b, flags)
	}
	return b
}

// dirRun is the run of sorted entries under one directory prefix.
type dirRun struct {
	lo, hi int
	skip   int // the prefix's length
}

// dirRun finds the entries whose paths start with prefix ("" or ending
// in '/'): contiguous in path order.
func (c *StatCache) dirRun(prefix string) dirRun {
	if prefix == "" {
		return dirRun{0, len(c.offs), 0}
	}
	lo := c.search(0, len(c.offs), 0, prefix)
	// The paths that start with prefix are followed by the first that is
	// greater than every such path: prefix with its last byte ('/')
	// replaced by the next byte ('0').
	hi := c.search(lo, len(c.offs), 0, prefix[:len(prefix)-1]+"0")
	return dirRun{lo, hi, len(prefix)}
}

// lookup returns the entry of prefix+name, where r is prefix's run and
// path is prefix+name as bytes (a map lookup with it allocates nothing).
func (c *StatCache) lookup(r dirRun, path []byte, name string) (Entry, bool) {
	if len(c.over) > 0 || len(c.gone) > 0 {
		if e, ok := c.over[string(path)]; ok {
			return e, true
		}
		if _, ok := c.gone[string(path)]; ok {
			return Entry{}, false
		}
	}
	if i := c.search(r.lo, r.hi, r.skip, name); i < r.hi && c.keyAt(i)[r.skip:] == name {
		return c.entryAt(i), true
	}
	return Entry{}, false
}
