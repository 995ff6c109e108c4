package merge

import (
	"sort"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// bigDiff is the size (the runes of both sides) above which a diff is cut
// in pieces before go-diff sees it. go-diff's Myers search, without a
// deadline, costs the product of the size and the number of differences:
// two long versions that differ a lot (a note reorganised, a log of a few
// repeated lines rewritten) would take minutes. Cut at lines that occur
// once in each side, the pieces are short, and the diff of a long note
// with scattered edits is the same: those lines match in any minimal diff
// of such versions. Below the size, go-diff diffs the whole.
const bigDiff = 2048

// diffRunes marks the changes between ra and rb: ca[ka[i]] for a line of
// ra that is not matched, cb[kb[j]] for one of rb.
func (d *differ) diffRunes(ra, rb []rune, ka, kb []int32, ca, cb []bool, cut bool) {
	p := 0
	for p < len(ra) && p < len(rb) && ra[p] == rb[p] {
		p++
	}
	s := 0
	for s < len(ra)-p && s < len(rb)-p && ra[len(ra)-1-s] == rb[len(rb)-1-s] {
		s++
	}
	ra, rb, ka, kb = ra[p:len(ra)-s], rb[p:len(rb)-s], ka[p:len(ka)-s], kb[p:len(kb)-s]
	if cut {
		// A piece of a cut diff: lines that the other side has only
		// outside the piece cannot match in it either (a moved block).
		ra, rb, ka, kb = d.sharedOnly(ra, rb, ka, kb, ca, cb)
	}
	switch {
	case len(ra) == 0 || len(rb) == 0:
		for _, k := range ka {
			ca[k] = true
		}
		for _, k := range kb {
			cb[k] = true
		}
		return
	case len(ra)+len(rb) <= bigDiff:
		d.goDiff(ra, rb, ka, kb, ca, cb)
		return
	}
	anchors := d.anchors(ra, rb)
	if len(anchors) == 0 {
		// No line once in each: the two halves, as a last resort against
		// quadratic time; still a valid diff.
		ha, hb := len(ra)/2, len(rb)/2
		d.diffRunes(ra[:ha], rb[:hb], ka[:ha], kb[:hb], ca, cb, true)
		d.diffRunes(ra[ha:], rb[hb:], ka[ha:], kb[hb:], ca, cb, true)
		return
	}
	i, j := 0, 0
	for _, an := range anchors {
		d.diffRunes(ra[i:an[0]], rb[j:an[1]], ka[i:an[0]], kb[j:an[1]], ca, cb, true)
		i, j = an[0]+1, an[1]+1
	}
	d.diffRunes(ra[i:], rb[j:], ka[i:], kb[j:], ca, cb, true)
}

// sharedOnly marks changed the lines of ra that rb lacks and those of rb
// that ra lacks, and returns the others.
func (d *differ) sharedOnly(ra, rb []rune, ka, kb []int32, ca, cb []bool) ([]rune, []rune, []int32, []int32) {
	d.countRunes(ra, rb)
	filter := func(rs []rune, ks []int32, c []bool, other []int32) ([]rune, []int32) {
		n := 0
		for _, r := range rs {
			if other[codeOf(r)] > 0 {
				n++
			}
		}
		if n == len(rs) {
			return rs, ks
		}
		out, outK := make([]rune, 0, n), make([]int32, 0, n)
		for i, r := range rs {
			if other[codeOf(r)] > 0 {
				out, outK = append(out, r), append(outK, ks[i])
			} else {
				c[ks[i]] = true
			}
		}
		return out, outK
	}
	ra2, ka2 := filter(ra, ka, ca, d.cntB)
	rb2, kb2 := filter(rb, kb, cb, d.cntA)
	return ra2, rb2, ka2, kb2
}

// countRunes counts each rune's occurrences in ra (cntA) and rb (cntB),
// and records in posB the last position in rb of each.
func (d *differ) countRunes(ra, rb []rune) {
	d.cntA, d.cntB, d.posB = grow(d.cntA, d.ncode), grow(d.cntB, d.ncode), grow(d.posB, d.ncode)
	for _, f := range [][]rune{ra, rb} {
		for _, r := range f {
			c := codeOf(r)
			d.cntA[c], d.cntB[c] = 0, 0
		}
	}
	for _, r := range ra {
		d.cntA[codeOf(r)]++
	}
	for j, r := range rb {
		c := codeOf(r)
		d.cntB[c]++
		d.posB[c] = int32(j)
	}
}

// goDiff marks the changes go-diff finds between ra and rb.
func (d *differ) goDiff(ra, rb []rune, ka, kb []int32, ca, cb []bool) {
	i, j := 0, 0
	for _, op := range d.dmp.DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(op.Text)
		switch op.Type {
		case diffmatchpatch.DiffEqual:
			i, j = i+n, j+n
		case diffmatchpatch.DiffDelete:
			for _, k := range ka[i : i+n] {
				ca[k] = true
			}
			i += n
		case diffmatchpatch.DiffInsert:
			for _, k := range kb[j : j+n] {
				cb[k] = true
			}
			j += n
		}
	}
}

// anchors returns the positions [in ra, in rb] of lines that occur exactly
// once in ra and once in rb, as many as can match in order (the longest
// increasing run of their rb positions, in ra order).
func (d *differ) anchors(ra, rb []rune) [][2]int {
	d.countRunes(ra, rb)
	// pairs holds, in ra order, the rb position of each unique line; the
	// ra position is found again through prev's walk below.
	size := min(len(ra), len(rb))
	d.pairs, d.pairA = grow(d.pairs, size)[:0], grow(d.pairA, size)[:0]
	d.tails, d.prev = grow(d.tails, size)[:0], grow(d.prev, size)[:0]
	for i, r := range ra {
		if c := codeOf(r); d.cntA[c] == 1 && d.cntB[c] == 1 {
			d.pairs = append(d.pairs, d.posB[c])
			d.pairA = append(d.pairA, int32(i))
		}
	}
	// Patience sorting: tails[k] is the pair ending the best run of
	// length k+1 so far, prev the pair before each pair in its run.
	for k, b := range d.pairs {
		t := sort.Search(len(d.tails), func(x int) bool { return d.pairs[d.tails[x]] >= b })
		p := int32(-1)
		if t > 0 {
			p = d.tails[t-1]
		}
		d.prev = append(d.prev, p)
		if t == len(d.tails) {
			d.tails = append(d.tails, int32(k))
		} else {
			d.tails[t] = int32(k)
		}
	}
	if len(d.tails) == 0 {
		return nil
	}
	out := make([][2]int, len(d.tails))
	for k, n := d.tails[len(d.tails)-1], len(out)-1; k >= 0; k, n = d.prev[k], n-1 {
		out[n] = [2]int{int(d.pairA[k]), int(d.pairs[k])}
	}
	return out
}

// codeOf undoes keep's step over the surrogates.
func codeOf(r rune) int {
	if r >= 0xE000 {
		return int(r) - (0xE000 - 0xD800)
	}
	return int(r)
}
