package merge

import (
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// hunk is one change between an old and a new line sequence: old lines
// [i1, i1+chg1) become new lines [i2, i2+chg2). A diff is a list of hunks in
// order, separated by at least one unchanged line.
type hunk struct{ i1, i2, chg1, chg2 int }

// differ diffs symbol sequences whose symbols are below nsym, keeping its
// scratch memory from one diff to the next: a merge diffs base against each
// side, then the sides of every conflict against each other.
type differ struct {
	dmp *diffmatchpatch.DiffMatchPatch
	// code holds, during one diff, each symbol's rune for go-diff (see
	// runes); it is all zero between diffs.
	code   []rune
	ra, rb []rune  // the runes go-diff diffs ...
	ka, kb []int32 // ... and their lines
	ncode  int     // the number of distinct runes in ra and rb
	// Scratch of anchors (split.go), per rune code and per anchor.
	cntA, cntB, posB          []int32
	pairs, pairA, tails, prev []int32
	ca, cb                    []bool // change marks of the two sequences
}

func newDiffer(nsym int) *differ {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // no deadline: the same inputs always give the same diff
	return &differ{dmp: dmp, code: make([]rune, nsym)}
}

// diff returns the line diff of a (old) and b (new): the common prefix and
// suffix trimmed, go-diff's Myers diff of the rest, then every run of
// changed lines placed by rule 1 (place).
func (d *differ) diff(a, b []int32) []hunk {
	d.ca, d.cb = grow(d.ca, len(a)), grow(d.cb, len(b))
	clear(d.ca)
	clear(d.cb)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	ca, cb := d.ca[p:len(a)-s], d.cb[p:len(b)-s]
	switch {
	case len(ma) == 0 || len(mb) == 0:
		fill(ca)
		fill(cb)
	case !d.runes(ma, mb, ca, cb):
		// More distinct shared lines than runes (about 1.1 million): a
		// valid, if not minimal, diff.
		fill(ca)
		fill(cb)
	default:
		d.diffRunes(d.ra, d.rb, d.ka, d.kb, ca, cb, false)
	}
	// Deletions first, then insertions: the order decides which of two
	// runs that could both move gives way (observed on git's output).
	place(a, d.ca, d.cb)
	place(b, d.cb, d.ca)
	return hunks(d.ca, d.cb)
}

// Runes given to go-diff. go-diff compares runes but carries them between
// its steps as UTF-8 strings, so every code must be a valid rune (no
// surrogates) or distinct lines would become one U+FFFD.
const maxCode = utf8.MaxRune - (0xE000 - 0xD800)

// runes gives go-diff the lines of a and b that the other one has too, one
// rune per distinct line, in d.ra and d.rb, and their indexes in d.ka and
// d.kb; every other line is marked changed in ca or cb. A line that only
// one side has cannot be matched, so leaving it out changes nothing but
// what go-diff chooses among equally short diffs, where it helps (doc.go).
// It returns false when the shared lines outnumber the runes.
func (d *differ) runes(a, b []int32, ca, cb []bool) bool {
	const inA = -1 // a mark in code while counting
	for _, s := range a {
		d.code[s] = inA
	}
	next := rune(0)
	for _, s := range b {
		if d.code[s] == inA {
			d.code[s] = next + 1 // 0 stays "not shared"
			next++
		}
	}
	d.ra, d.ka = keep(a, d.code, ca, grow(d.ra, len(a))[:0], grow(d.ka, len(a))[:0])
	d.rb, d.kb = keep(b, d.code, cb, grow(d.rb, len(b))[:0], grow(d.kb, len(b))[:0])
	for _, s := range a {
		d.code[s] = 0
	}
	for _, s := range b {
		d.code[s] = 0
	}
	d.ncode = int(next)
	return next <= maxCode
}

// keep appends the rune of every line of f whose code is shared (above 0)
// to rs and its index to ks, and marks the other lines changed.
func keep(f []int32, code []rune, c []bool, rs []rune, ks []int32) ([]rune, []int32) {
	for i, s := range f {
		k := code[s] - 1
		if k < 0 {
			c[i] = true
			continue
		}
		if k >= 0xD800 {
			k += 0xE000 - 0xD800
		}
		rs = append(rs, k)
		ks = append(ks, int32(i))
	}
	return rs, ks
}

// grow returns s resized to n elements, reusing its memory when it can;
// the contents are unspecified.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/32+16)
	}
	return s[:n]
}

func fill(c []bool) {
	for i := range c {
		c[i] = true
	}
}

// hunks turns the change marks into hunks: unchanged lines pair up in
// order, and each stretch of changed lines between two pairs is a hunk.
func hunks(ca, cb []bool) []hunk {
	var hs []hunk
	i, j := 0, 0
	for i < len(ca) || j < len(cb) {
		if i < len(ca) && j < len(cb) && !ca[i] && !cb[j] {
			i, j = i+1, j+1
			continue
		}
		h := hunk{i1: i, i2: j}
		for i < len(ca) && ca[i] {
			i++
		}
		for j < len(cb) && cb[j] {
			j++
		}
		h.chg1, h.chg2 = i-h.i1, j-h.i2
		hs = append(hs, h)
	}
	return hs
}
