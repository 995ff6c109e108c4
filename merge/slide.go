package merge

// slide places the runs of changed lines of f (marks cf) the way the
// reference merge does, against the changes of the other sequence of the
// same diff (marks co), which stay where they are.
//
// A run whose last line equals the line just after it could as well end one
// line lower: the same lines change, the diff is as short. Such a run is
// moved down as far as it can go (past a blank line, a fence, a "---"),
// unless on its way it sits at a place where the other sequence also
// changes lines; then it stays at the lowest such place, so that a
// replacement is kept in one piece rather than cut into a deletion and an
// insertion some lines apart. A run that meets another run while moving
// becomes one run with it, and the whole is placed again.
//
// Places are counted in unchanged lines: a run after k unchanged lines of f
// is at place k, and the other sequence changes lines at place k when it
// has changed lines after its own k-th unchanged line (the unchanged lines
// of the two sequences pair up in order).
func (d *differ) slide(f []int32, cf, co []bool) {
	d.gaps = otherPlaces(co, d.gaps)
	n := len(f)
	place := 0 // unchanged lines of f before i
	for i := 0; i < n; {
		if !cf[i] {
			i, place = i+1, place+1
			continue
		}
		lo, hi := i, i+1
		for hi < n && cf[hi] {
			hi++
		}
		best := -1 // hi at the lowest place where the other side changes too
		for {
			size := hi - lo
			// As high as it goes. A step up marks the line above the run
			// changed and the run's last line unchanged.
			for lo > 0 && f[lo-1] == f[hi-1] {
				cf[lo-1], cf[hi-1] = true, false
				lo, hi, place = lo-1, hi-1, place-1
				for lo > 0 && cf[lo-1] {
					lo--
				}
			}
			best = -1
			if d.gaps[place] {
				best = hi
			}
			// Then as low as it goes, noting the places shared with a
			// change of the other side.
			for hi < n && f[lo] == f[hi] {
				cf[lo], cf[hi] = false, true
				lo, hi, place = lo+1, hi+1, place+1
				for hi < n && cf[hi] {
					hi++
				}
				if d.gaps[place] {
					best = hi
				}
			}
			if hi-lo == size {
				break // nothing merged: the run is final
			}
		}
		// Back up to the lowest shared place; the last pass merged
		// nothing, so each step up undoes one step down.
		for best >= 0 && hi > best {
			cf[lo-1], cf[hi-1] = true, false
			lo, hi, place = lo-1, hi-1, place-1
		}
		i = hi
	}
}

// otherPlaces returns, for every place k (after k unchanged lines), whether
// c has changed lines there.
func otherPlaces(c []bool, buf []bool) []bool {
	unchanged := 0
	for _, x := range c {
		if !x {
			unchanged++
		}
	}
	buf = grow(buf, unchanged+1)
	clear(buf)
	k := 0
	for _, x := range c {
		if x {
			buf[k] = true
		} else {
			k++
		}
	}
	return buf
}
