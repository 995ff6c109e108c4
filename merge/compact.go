package merge

// compact is git's xdl_change_compact without the indent heuristic (which
// merge-file does not enable): every run ("group") of changed lines in f is
// slid up as far as it goes, merging with runs it meets, then down as far as
// it goes; if some position lines it up with a change run of the other file
// fo, the lowest such position wins, otherwise the lowest position. Sliding
// keeps the diff valid: a run [s, e) may move down by one when line s equals
// line e.
//
// c and co are the change marks of f and fo with their sentinels (index i+1
// is line i). Groups of f and fo correspond one to one because the unchanged
// lines between them pair up.
func compact(f []int32, c, co []byte) {
	x := cfile{f, c}
	o := cfile{nil, co}
	g, gOther := x.first(), o.first()
	for {
		if g.end != g.start {
			x.compactGroup(&g, o, &gOther)
		}
		if g.end == x.nrec() {
			return
		}
		// The groups up to the next changed line of f are empty and need
		// nothing: jump over them, and over as many groups of fo.
		next := nextChanged(c, g.end+1)
		if next == x.nrec() {
			return
		}
		o.skip(&gOther, next-g.end)
		g = group{next, x.scanDown(next)}
	}
}

type cfile struct {
	recs []int32
	c    []byte
}

// group is a run [start, end) of changed lines, possibly empty.
type group struct{ start, end int }

func (f cfile) changed(i int) bool  { return f.c[i+1] != 0 }
func (f cfile) set(i int, v byte)   { f.c[i+1] = v }
func (f cfile) nrec() int           { return len(f.c) - 2 }
func (f cfile) match(i, j int) bool { return f.recs[i] == f.recs[j] }
func (f cfile) first() (g group)    { g.end = f.scanDown(0); return g }
func (f cfile) scanDown(i int) int {
	for f.changed(i) {
		i++
	}
	return i
}
func (f cfile) scanUp(i int) int {
	for f.changed(i - 1) {
		i--
	}
	return i
}

func (f cfile) next(g *group) bool {
	if g.end == f.nrec() {
		return false
	}
	g.start = g.end + 1
	g.end = f.scanDown(g.start)
	return true
}

// skip moves g n groups on, as n calls of next would: each step passes one
// unchanged line and the run of changed lines after it.
func (f cfile) skip(g *group, n int) {
	p := g.end // the unchanged line that ends g
	for {
		if p >= f.nrec() {
			panic("merge: change groups out of step")
		}
		q := nextChanged(f.c, p+1)
		if q-p >= n {
			p += n
			break
		}
		n -= q - p
		p = f.scanDown(q)
	}
	g.start, g.end = p, f.scanDown(p)
}

func (f cfile) previous(g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	g.start = f.scanUp(g.end)
	return true
}

func (f cfile) slideUp(g *group) bool {
	if g.start > 0 && f.match(g.start-1, g.end-1) {
		g.start--
		f.set(g.start, 1)
		g.end--
		f.set(g.end, 0)
		g.start = f.scanUp(g.start)
		return true
	}
	return false
}

func (f cfile) slideDown(g *group) bool {
	if g.end < f.nrec() && f.match(g.start, g.end) {
		f.set(g.start, 0)
		g.start++
		f.set(g.end, 1)
		g.end++
		g.end = f.scanDown(g.end)
		return true
	}
	return false
}

func (f cfile) compactGroup(g *group, o cfile, gOther *group) {
	var earliestEnd, endMatchingOther int
	for {
		size := g.end - g.start
		endMatchingOther = -1
		for f.slideUp(g) {
			if !o.previous(gOther) {
				panic("merge: change groups out of step sliding up")
			}
		}
		earliestEnd = g.end
		if gOther.end > gOther.start {
			endMatchingOther = g.end
		}
		for f.slideDown(g) {
			if !o.next(gOther) {
				panic("merge: change groups out of step sliding down")
			}
			if gOther.end > gOther.start {
				endMatchingOther = g.end
			}
		}
		if size == g.end-g.start {
			break
		}
	}
	if g.end != earliestEnd && endMatchingOther != -1 {
		// Slide back up to the last position that lines up with a change
		// of the other file: a deletion next to an insertion reads as one
		// replacement.
		for gOther.end == gOther.start {
			if !f.slideUp(g) {
				panic("merge: matching change group disappeared")
			}
			if !o.previous(gOther) {
				panic("merge: change groups out of step sliding to match")
			}
		}
	}
}
