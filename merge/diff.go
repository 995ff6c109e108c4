package merge

// hunk is one change between an old and a new line sequence: old lines
// [i1, i1+chg1) become new lines [i2, i2+chg2). A diff is a list of hunks in
// order, separated by at least one unchanged line.
type hunk struct{ i1, i2, chg1, chg2 int }

// diff returns the line diff of a (old) and b (new) as git's xdiff makes it
// (xdl_do_diff without flags): common prefix and suffix trimmed, unmatched
// lines discarded (discard.go), a Myers diff of the rest (myers.go), then
// the change runs compacted (compact.go).
func diff(a, b []int32) []hunk {
	ca, cb := changed(a, b)
	// The order matters and is git's: first the old file's runs (deletions)
	// against the new file, then the new file's (insertions).
	compact(a, ca, cb)
	compact(b, cb, ca)
	return script(ca, cb, len(a), len(b))
}

// changed marks the lines of a and b that the diff changes. Both
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
	// rest (kept) go to the Myers diff, indexed back through ka and kb.
	inB, inA := occurrences(a, b, ma, mb)
	ka, kb := discard(a, b, p, len(ma), ca, inB), discard(b, a, p, len(mb), cb, inA)
	ha1, ha2 := make([]int32, len(ka)), make([]int32, len(kb))
	for i, k := range ka {
		ha1[i] = a[k]
	}
	for i, k := range kb {
		ha2[i] = b[k]
	}
	xdiff(ha1, ha2, ka, kb, ca, cb)
	return ca, cb
}

func mark(c []bool, from, count int) {
	for k := from; k < from+count; k++ {
		c[k+1] = true
	}
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
