package merge

import (
	"bytes"
	"math"
)

// hunk is one change between an old and a new line sequence: old lines
// [i1, i1+chg1) become new lines [i2, i2+chg2). A diff is a list of hunks in
// order, separated by at least one unchanged line.
type hunk struct{ i1, i2, chg1, chg2 int }

// differ diffs symbol sequences whose symbols are below nsym. It keeps its
// scratch memory from one diff to the next, so the diffs of one merge
// (base against each side, then the conflicts' sides against each other)
// allocate it once: fresh memory is a good part of a merge's cost.
type differ struct {
	occA, occB []uint16 // per symbol, its count in a and in b; zero between diffs
	ca, cb     []byte   // change marks, see changed
	dis        []int8
	ka, kb     []int32 // the kept lines ...
	ha1, ha2   []int32 // ... and their symbols
	kvdf, kvdb []int32
	window     int // the Myers search's first window if not 0 (tests)
}

func newDiffer(nsym int) *differ {
	d := &differ{occA: make([]uint16, nsym), occB: make([]uint16, nsym)}
	touch(d.occA) // count reads before it writes
	touch(d.occB)
	return d
}

// diff returns the line diff of a (old) and b (new) as git's xdiff makes it
// (xdl_do_diff without flags): common prefix and suffix trimmed, unmatched
// lines discarded (discard.go), a Myers diff of the rest (myers.go), then
// the change runs compacted (compact.go).
func (d *differ) diff(a, b []int32) []hunk {
	ca, cb := d.changed(a, b)
	// The order matters and is git's: first the old file's runs (deletions)
	// against the new file, then the new file's (insertions).
	compact(a, ca, cb)
	compact(b, cb, ca)
	return script(ca, cb, len(a), len(b))
}

// grow returns s resized to n elements, reusing its memory when it can;
// the contents are unspecified. A new slice gets some headroom, as the
// second diff of a merge is usually a little larger than the first.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/32+16)
	}
	return s[:n]
}

// changed marks the lines of a and b that the diff changes: mark 1 is
// changed, 0 unchanged. Both slices carry an unchanged sentinel before the
// first and after the last line (index i+1 is line i), which the compaction
// walks rely on. Bytes rather than bools so that runs are found with
// bytes.IndexByte.
func (d *differ) changed(a, b []int32) (ca, cb []byte) {
	d.ca, d.cb = grow(d.ca, len(a)+2), grow(d.cb, len(b)+2)
	ca, cb = d.ca, d.cb
	clear(ca)
	clear(cb)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	na, nb := len(a)-p-s, len(b)-p-s
	if na == 0 || nb == 0 {
		mark(ca, p, na)
		mark(cb, p, nb)
		return ca, cb
	}
	// Lines that cannot match are changed without asking the diff; the
	// rest (kept) go to the Myers diff, indexed back through ka and kb.
	count(d.occA, a)
	count(d.occB, b)
	d.ka, d.ha1 = d.discard(a, p, na, ca, d.occB, d.ka, d.ha1)
	d.kb, d.ha2 = d.discard(b, p, nb, cb, d.occA, d.kb, d.ha2)
	for _, s := range a {
		d.occA[s] = 0
	}
	for _, s := range b {
		d.occB[s] = 0
	}
	d.xdiff(ca, cb)
	return ca, cb
}

// count adds the occurrences of the symbols of f to occ. A count stops at
// the largest uint16, far above the largest threshold discard compares
// it with (maxEqLimit).
func count(occ []uint16, f []int32) {
	for _, s := range f {
		if occ[s] != math.MaxUint16 {
			occ[s]++
		}
	}
}

func mark(c []byte, from, count int) {
	for k := from; k < from+count; k++ {
		c[k+1] = 1
	}
}

// script turns the change marks into hunks.
func script(ca, cb []byte, na, nb int) []hunk {
	var hs []hunk
	i, j := 0, 0
	for i < na || j < nb {
		// Unchanged lines pair up: skip to the first changed one of
		// either file.
		da, db := nextChanged(ca, i), nextChanged(cb, j)
		step := min(da-i, db-j)
		i, j = i+step, j+step
		if i >= na && j >= nb {
			break
		}
		h := hunk{i1: i, i2: j}
		for ca[i+1] != 0 {
			i++
		}
		for cb[j+1] != 0 {
			j++
		}
		h.chg1, h.chg2 = i-h.i1, j-h.i2
		hs = append(hs, h)
	}
	return hs
}

// nextChanged returns the first changed line at or after i, or the
// number of lines when there is none.
func nextChanged(c []byte, i int) int {
	if k := bytes.IndexByte(c[i+1:len(c)-1], 1); k >= 0 {
		return i + k
	}
	return len(c) - 2
}
