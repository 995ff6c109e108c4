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
	d.dis = grow(d.dis, count)
	dis := d.dis // 0 no match, 1 match, 2 many matches
	for i, s := range f {
		// Without a switch the compiler can avoid branching: the counts
		// follow no pattern a branch predictor could learn.
		var x int8
		if n := occ[s]; n >= mlim {
			x = 2
		} else if n > 0 {
			x = 1
		}
		dis[i] = x
	}
	keep, ha = grow(keep, count), grow(ha, count)
	k := 0
	for i, x := range dis {
		if x == 1 || x == 2 && !multimatch(dis, i) {
			keep[k], ha[k] = int32(from+i), f[i]
			k++
		} else {
			c[i] = 1
		}
	}
	return keep[:k], ha[:k]
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
