package merge

import (
	"slices"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

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
	gaps                      []bool // scratch of slide
}

func newDiffer(nsym int) *differ {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // no deadline: the same inputs always give the same diff
	return &differ{dmp: dmp, code: make([]rune, nsym)}
}

// span is the half-open line range [lo, hi) of one text.
type span struct{ lo, hi int }

func (s span) len() int { return s.hi - s.lo }

// change is one edit of a two-way diff: the old lines in old are replaced
// by the new lines in new. Either may be empty (an insertion, a deletion),
// not both. A diff lists its edits in order, at least one unchanged line
// apart.
type change struct{ old, new span }

// lineDiff returns the edits that turn a into b: the lines both start and
// end with are set aside, go-diff diffs the rest (split.go), and each run of
// changed lines is then placed where the merge rules expect it (slide.go).
func (d *differ) lineDiff(a, b []int32) []change {
	ca, cb := d.flags(len(a), len(b))
	d.mark(a, b, ca, cb)
	d.slide(a, ca, cb)
	d.slide(b, cb, ca)
	return collect(ca, cb, nil)
}

// lineDiffFromEnd is lineDiff computed on the lines in reverse order, then
// turned back: as short a diff, but where several are equally short it
// tends to match the other way (the later of two blank lines, say).
// The merge tries it where lineDiff's choice makes changes touch.
func (d *differ) lineDiffFromEnd(a, b []int32) []change {
	ra, rb := slices.Clone(a), slices.Clone(b)
	slices.Reverse(ra)
	slices.Reverse(rb)
	ca, cb := d.flags(len(a), len(b))
	d.mark(ra, rb, ca, cb)
	slices.Reverse(ca)
	slices.Reverse(cb)
	d.slide(a, ca, cb)
	d.slide(b, cb, ca)
	return collect(ca, cb, nil)
}

// mark sets ca[i] for every line of a that a shortest diff (go-diff's
// choice) removes and cb[j] for every line of b it adds.
func (d *differ) mark(a, b []int32, ca, cb []bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	fa, fb := ca[pre:len(a)-suf], cb[pre:len(b)-suf]
	switch {
	case len(ma) == 0 || len(mb) == 0:
		setAll(fa)
		setAll(fb)
	case d.runes(ma, mb, fa, fb):
		d.diffRunes(d.ra, d.rb, d.ka, d.kb, fa, fb, false)
	default:
		// More distinct shared lines than runes: every middle line
		// changed is still a valid diff, only not a minimal one.
		setAll(fa)
		setAll(fb)
	}
}

// flags returns the change marks of two sequences, all false, reusing
// the differ's memory.
func (d *differ) flags(na, nb int) ([]bool, []bool) {
	d.ca, d.cb = grow(d.ca, na), grow(d.cb, nb)
	clear(d.ca)
	clear(d.cb)
	return d.ca, d.cb
}

// runs counts the runs of changed lines in c, a bound on the edits.
func runs(c []bool) int {
	n := 0
	for i, x := range c {
		if x && (i == 0 || !c[i-1]) {
			n++
		}
	}
	return n
}

func setAll(c []bool) {
	for i := range c {
		c[i] = true
	}
}

// collect turns change marks into edits, appended to out. The unchanged
// lines of the two sequences pair up in order, so walking both at once,
// every stop at a changed line on either side starts an edit that lasts
// until both sides are unchanged again.
func collect(ca, cb []bool, out []change) []change {
	if out == nil {
		out = make([]change, 0, runs(ca)+runs(cb))
	}
	i, j := 0, 0
	for i < len(ca) || j < len(cb) {
		if i < len(ca) && j < len(cb) && !ca[i] && !cb[j] {
			i, j = i+1, j+1
			continue
		}
		e := change{old: span{i, i}, new: span{j, j}}
		for i < len(ca) && ca[i] {
			i++
		}
		for j < len(cb) && cb[j] {
			j++
		}
		if e.old.lo == i && e.new.lo == j {
			// Unreachable with matching unchanged counts; stop rather
			// than loop if marks were ever inconsistent.
			panic("merge: inconsistent change marks")
		}
		e.old.hi, e.new.hi = i, j
		out = append(out, e)
	}
	return out
}

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
