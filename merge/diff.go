package merge

import (
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// hunk is one change between an old and a new line sequence: old lines
// [i1, i1+chg1) become new lines [i2, i2+chg2). A diff is a list of hunks in
// order, separated by at least one unchanged line.
type hunk struct{ i1, i2, chg1, chg2 int }

// diff returns the line diff of a (old) and b (new) in git's shape: a
// minimal diff whose change runs are then compacted (see compact).
func diff(a, b []int32) []hunk {
	ca, cb := changed(a, b)
	// The order matters and is git's: first the old file's runs (deletions)
	// against the new file, then the new file's (insertions).
	compact(a, ca, cb)
	compact(b, cb, ca)
	return script(ca, cb, len(a), len(b))
}

// changed marks the lines of a and b that a minimal diff changes. Both
// slices carry a false sentinel before the first and after the last line
// (index i+1 is line i), which the compaction walks rely on.
func changed(a, b []int32) (ca, cb []bool) {
	ca, cb = make([]bool, len(a)+2), make([]bool, len(b)+2)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma) == 0 || len(mb) == 0 {
		mark(ca, p, len(ma))
		mark(cb, p, len(mb))
		return ca, cb
	}
	// Lines that cannot match are changed without asking the diff; the
	// rest (kept) go to go-diff, indexed back through ka and kb.
	inB, inA := occurrences(a, b, ma, mb)
	ka, kb := discard(a, b, p, len(ma), ca, inB), discard(b, a, p, len(mb), cb, inA)
	ra, rb, ok := toRunes(a, b, ka, kb)
	if !ok {
		// More distinct lines than runes: replace the middle wholesale. The
		// diff is still correct, only not minimal (a merge may conflict more).
		mark(ca, p, len(ma))
		mark(cb, p, len(mb))
		return ca, cb
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // no deadline: the result must not depend on speed
	i, j := 0, 0
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			i += n
			j += n
		case diffmatchpatch.DiffDelete:
			for _, k := range ka[i : i+n] {
				ca[k+1] = true
			}
			i += n
		case diffmatchpatch.DiffInsert:
			for _, k := range kb[j : j+n] {
				cb[k+1] = true
			}
			j += n
		}
	}
	return ca, cb
}

func mark(c []bool, from, count int) {
	for k := from; k < from+count; k++ {
		c[k+1] = true
	}
}

// maxRunes is how many distinct lines fit in valid runes (surrogates and
// values above utf8.MaxRune are skipped: go-diff turns runes into strings,
// and invalid ones would all become U+FFFD and compare equal).
const maxRunes = utf8.MaxRune + 1 - (0xE000 - 0xD800)

// toRunes maps the kept lines' symbols to distinct valid runes,
// renumbering when the symbols of the whole merge are too many.
func toRunes(a, b []int32, ka, kb []int) (ra, rb []rune, ok bool) {
	top := int32(0)
	for _, k := range ka {
		top = max(top, a[k])
	}
	for _, k := range kb {
		top = max(top, b[k])
	}
	if int(top) < maxRunes {
		return symRunes(a, ka, nil), symRunes(b, kb, nil), true
	}
	local := make(map[int32]int32)
	renum := func(s int32) int32 {
		if id, ok := local[s]; ok {
			return id
		}
		id := int32(len(local))
		local[s] = id
		return id
	}
	ra, rb = symRunes(a, ka, renum), symRunes(b, kb, renum)
	return ra, rb, len(local) <= maxRunes
}

func symRunes(syms []int32, keep []int, renum func(int32) int32) []rune {
	r := make([]rune, len(keep))
	for i, k := range keep {
		s := syms[k]
		if renum != nil {
			s = renum(s)
		}
		if s >= 0xD800 {
			s += 0xE000 - 0xD800
		}
		r[i] = s
	}
	return r
}

// script turns the change marks into hunks.
func script(ca, cb []bool, na, nb int) []hunk {
	var hs []hunk
	i, j := 0, 0
	for i < na || j < nb {
		if !ca[i+1] && !cb[j+1] {
			i++
			j++
			continue
		}
		h := hunk{i1: i, i2: j}
		for ca[i+1] {
			i++
		}
		for cb[j+1] {
			j++
		}
		h.chg1, h.chg2 = i-h.i1, j-h.i2
		hs = append(hs, h)
	}
	return hs
}
