package merge

// discard is git's xdl_cleanup_records, the step before its Myers diff. It
// decides which of the lines [from, from+count) of f take part in the diff
// against the other file and marks the others changed in c:
//   - a line that occurs nowhere in the other file is changed, whatever the
//     diff says;
//   - a line that occurs there at least mlim times (mlim ~ sqrt(len(f)), as
//     blank lines typically do) is changed too when it sits in the middle of
//     runs of such unmatched lines (see multimatch).
//
// Taking the same lines out as git does makes the diff below choose the
// same of several equally short diffs far more often; it also shrinks the
// problem. occ counts every symbol in the other file. It returns the
// indexes of the kept lines, in order, and their symbols, in keep and ha
// (reused).
func (d *differ) discard(f []int32, from, count int, c []byte, occ []uint16, keep, ha []int32) ([]int32, []int32) {
	mlim := uint16(min(bogoSqrt(len(f)), maxEqLimit))
	f, c = f[from:from+count], c[from+1:from+1+count]
	// dis has a matched sentinel on both sides, see below.
	d.dis = grow(d.dis, count+2)
	pd := d.dis
	pd[0], pd[count+1] = 1, 1
	dis := pd[1 : count+1] // 0 no match, 1 match, 2 many matches
	// The loops below do not branch on the classes: they follow no
	// pattern a branch predictor could learn (blank lines, say, are
	// many-matches lines anywhere in a note).
	for i, s := range f {
		n := occ[s]
		dis[i] = int8(b2i(n > 0) + b2i(n >= mlim))
	}
	keep, ha = grow(keep, count), grow(ha, count)
	k := 0
	for i, x := range dis {
		keep[k], ha[k] = int32(from+i), f[i]
		kept := b2i(x != 0)
		// multimatch drops a many-matches line only between runs of
		// unmatched ones: with a matched neighbour (pd[i] is dis[i-1],
		// pd[i+2] is dis[i+1]) it is kept without asking.
		if b2i(x == 2)&b2i(pd[i] != 1)&b2i(pd[i+2] != 1) != 0 && multimatch(dis, i) {
			kept = 0
		}
		c[i] = byte(1 - kept)
		k += kept
	}
	return keep[:k], ha[:k]
}

// b2i is 1 for true, 0 for false, without a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

const (
	maxEqLimit    = 1024 // XDL_MAX_EQLIMIT
	simscanWindow = 100  // XDL_SIMSCAN_WINDOW
	kpdisRun      = 4    // XDL_KPDIS_RUN
)

// bogoSqrt is git's xdl_bogosqrt: a power of two near sqrt(n).
func bogoSqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// multimatch is git's xdl_clean_mmatch: a many-matches line i is dropped
// when it sits between runs of unmatched lines on both sides (within a
// window) and unmatched lines outnumber many-matches ones more than 3 to 1.
func multimatch(dis []int8, i int) bool {
	s, e := max(0, i-simscanWindow), min(len(dis)-1, i+simscanWindow)
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*kpdisRun < rpdis1+rdis1
}
