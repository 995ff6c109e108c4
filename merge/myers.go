package merge

// myers is git's xdl_recs_cmp and xdl_split (xdiff/xdiffi.c, git 2.39): a
// linear-space Myers diff that finds the middle snake from both ends and
// recurses on the halves. Tie-breaking between equally short diffs follows
// git's exactly (see doc.go for why that matters). Past an edit cost of 256
// it takes git's shortcuts (a long snake far along a diagonal, or the
// furthest-reaching path once the cost reaches ~sqrt(N)), so huge rewrites
// stay fast, at the price of a diff that may not be minimal, exactly as git.
//
// ha1 and ha2 are the symbols of the kept lines; r1 and r2 map them back
// to file lines, whose changes are marked in c1 and c2.
type myers struct {
	ha1, ha2 []int32
	r1, r2   []int32
	c1, c2   []byte
	d        *differ // whose kvdf and kvdb hold the diagonals
	mxcost   int
	window   int // see split
}

const (
	snakeCnt   = 20  // XDL_SNAKE_CNT
	heurMin    = 256 // XDL_HEUR_MIN_COST
	maxCostMin = 256 // XDL_MAX_COST_MIN
	kHeur      = 4   // XDL_K_HEUR
	lineMax    = 1<<31 - 1
)

// xdiff diffs d's kept lines (see discard) and marks the changes in c1 and
// c2.
func (d *differ) xdiff(c1, c2 []byte) {
	nd := len(d.ha1) + len(d.ha2) + 3
	m := &myers{ha1: d.ha1, ha2: d.ha2, r1: d.ka, r2: d.kb, c1: c1, c2: c2,
		d: d, mxcost: max(bogoSqrt(nd), maxCostMin)}
	// A search without needMin stops at cost mxcost, and one with needMin
	// splits a part of a search that stopped at that cost or less: this
	// first window should always suffice.
	m.window = m.mxcost + 2
	if d.window > 0 {
		m.window = d.window
	}
	m.cmp(0, len(d.ha1), 0, len(d.ha2), false)
}

func (m *myers) cmp(off1, lim1, off2, lim2 int, needMin bool) {
	k := common(m.ha1[off1:lim1], m.ha2[off2:lim2])
	off1, off2 = off1+k, off2+k
	k = commonBack(m.ha1[off1:lim1], m.ha2[off2:lim2])
	lim1, lim2 = lim1-k, lim2-k
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			m.c2[m.r2[off2]+1] = 1
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			m.c1[m.r1[off1]+1] = 1
		}
	default:
		i1, i2, minLo, minHi := m.split(off1, lim1, off2, lim2, needMin)
		m.cmp(off1, i1, off2, i2, minLo)
		m.cmp(i1, lim1, i2, lim2, minHi)
	}
}

// split finds where to cut [off1, lim1) x [off2, lim2) in two. git keeps
// a vector entry for every diagonal of the whole diff; the search only
// visits the diagonals within its edit cost of the two it starts from, so
// a window around those is enough and keeps the vectors of a 1 MB diff of
// a few hundred changes a few KB instead of hundreds. A window too narrow
// for the cost the search reaches makes it start over in one four times
// wider; the search does not depend on the window, only its memory does.
func (m *myers) split(off1, lim1, off2, lim2 int, needMin bool) (s1, s2 int, minLo, minHi bool) {
	w := m.window
	for {
		s1, s2, minLo, minHi, ok := m.search(off1, lim1, off2, lim2, needMin, w)
		if ok {
			return s1, s2, minLo, minHi
		}
		w *= 4
	}
}

// search is xdl_split with diagonal vectors covering the diagonals within w
// of the two middle ones; it gives up (ok false) if it must go further.
func (m *myers) search(off1, lim1, off2, lim2 int, needMin bool, w int) (s1, s2 int, minLo, minHi, ok bool) {
	ha1, ha2 := m.ha1, m.ha2
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	// The diagonals touched are [dmin-1, dmax+1] at most.
	lo, hi := max(dmin-1, min(fmid, bmid)-w), min(dmax+1, max(fmid, bmid)+w)
	m.d.kvdf, m.d.kvdb = grow(m.d.kvdf, hi-lo+1), grow(m.d.kvdb, hi-lo+1)
	kf, kb := m.d.kvdf, m.d.kvdb
	// The vectors need no clearing: the search sets every entry before
	// reading it, as git's does.
	kvdf := func(d int) int { return int(kf[d-lo]) }
	kvdb := func(d int) int { return int(kb[d-lo]) }
	setKvdf := func(d, v int) { kf[d-lo] = int32(v) }
	setKvdb := func(d, v int) { kb[d-lo] = int32(v) }
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid
	setKvdf(fmid, off1)
	setKvdb(bmid, lim1)
	for ec := 1; ; ec++ {
		gotSnake := false
		if fmin > dmin {
			fmin--
			if fmin-1 < lo {
				return 0, 0, false, false, false
			}
			setKvdf(fmin-1, -1)
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			if fmax+1 > hi {
				return 0, 0, false, false, false
			}
			setKvdf(fmax+1, -1)
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if kvdf(d-1) >= kvdf(d+1) {
				i1 = kvdf(d-1) + 1
			} else {
				i1 = kvdf(d + 1)
			}
			prev1 := i1
			i2 := i1 - d
			if i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2] {
				k := 1 + common(ha1[i1+1:lim1], ha2[i2+1:lim2])
				i1, i2 = i1+k, i2+k
			}
			if i1-prev1 > snakeCnt {
				gotSnake = true
			}
			setKvdf(d, i1)
			if odd && bmin <= d && d <= bmax && kvdb(d) <= i1 {
				return i1, i2, true, true, true
			}
		}
		if bmin > dmin {
			bmin--
			if bmin-1 < lo {
				return 0, 0, false, false, false
			}
			setKvdb(bmin-1, lineMax)
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			if bmax+1 > hi {
				return 0, 0, false, false, false
			}
			setKvdb(bmax+1, lineMax)
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if kvdb(d-1) < kvdb(d+1) {
				i1 = kvdb(d - 1)
			} else {
				i1 = kvdb(d+1) - 1
			}
			prev1 := i1
			i2 := i1 - d
			if i1 > off1 && i2 > off2 && ha1[i1-1] == ha2[i2-1] {
				k := 1 + commonBack(ha1[off1:i1-1], ha2[off2:i2-1])
				i1, i2 = i1-k, i2-k
			}
			if prev1-i1 > snakeCnt {
				gotSnake = true
			}
			setKvdb(d, i1)
			if !odd && fmin <= d && d <= fmax && i1 <= kvdf(d) {
				return i1, i2, true, true, true
			}
		}
		if needMin {
			continue
		}
		if gotSnake && ec > heurMin {
			best := 0
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := kvdf(d)
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > kHeur*ec && v > best && off1+snakeCnt <= i1 && i1 < lim1 && off2+snakeCnt <= i2 && i2 < lim2 {
					for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
						if k == snakeCnt {
							best, s1, s2 = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, true, false, true
			}
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := kvdb(d)
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > kHeur*ec && v > best && off1 < i1 && i1 <= lim1-snakeCnt && off2 < i2 && i2 <= lim2-snakeCnt {
					for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
						if k == snakeCnt-1 {
							best, s1, s2 = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, false, true, true
			}
		}
		if ec >= m.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(kvdf(d), lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1, i2 = lim2+d, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := lineMax, lineMax
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, kvdb(d))
				i2 := i1 - d
				if i2 < off2 {
					i1, i2 = off2+d, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return fbest1, fbest - fbest1, true, false, true
			}
			return bbest1, bbest - bbest1, false, true, true
		}
	}
}

// common returns the length of the common prefix of a and b. Snakes
// (runs of equal lines) are long between a note's edits; eight symbols
// are compared per branch.
func common(a, b []int32) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		if (x[0]^y[0])|(x[1]^y[1])|(x[2]^y[2])|(x[3]^y[3])|(x[4]^y[4])|(x[5]^y[5])|(x[6]^y[6])|(x[7]^y[7]) != 0 {
			break
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonBack returns the length of the common suffix of a and b.
func commonBack(a, b []int32) int {
	n := min(len(a), len(b))
	a, b = a[len(a)-n:], b[len(b)-n:]
	i := n // a[i:] and b[i:] are equal
	for ; i >= 8; i -= 8 {
		x, y := a[i-8:i:i], b[i-8:i:i]
		if (x[0]^y[0])|(x[1]^y[1])|(x[2]^y[2])|(x[3]^y[3])|(x[4]^y[4])|(x[5]^y[5])|(x[6]^y[6])|(x[7]^y[7]) != 0 {
			break
		}
	}
	for i > 0 && a[i-1] == b[i-1] {
		i--
	}
	return n - i
}
