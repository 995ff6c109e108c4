package merge

// discard is git's xdl_cleanup_records, the step before its Myers diff. It
// decides which of the lines [from, from+count) of f take part in the diff
// against o and marks the others changed in c:
//   - a line that occurs nowhere in o is changed, whatever the diff says;
//   - a line that occurs in o at least mlim times (mlim ~ sqrt(len(f)), as
//     blank lines typically do) is changed too when it sits in the middle of
//     runs of such unmatched lines (see multimatch).
//
// Taking the same lines out as git does makes the diff below choose the
// same of several equally short diffs far more often; it also shrinks the
// problem. It returns the indexes of the kept lines, in order.
func discard(f, o []int32, from, count int, c []bool, occ counter) []int {
	mlim := min(bogoSqrt(len(f)), maxEqLimit)
	dis := make([]int8, count) // 0 no match, 1 match, 2 many matches
	for i, s := range f[from : from+count] {
		switch n := occ(s); {
		case n == 0:
			dis[i] = 0
		case n >= mlim:
			dis[i] = 2
		default:
			dis[i] = 1
		}
	}
	keep := make([]int, 0, count)
	for i, d := range dis {
		if d == 1 || d == 2 && !multimatch(dis, i) {
			keep = append(keep, from+i)
		} else {
			c[from+i+1] = true
		}
	}
	return keep
}

const (
	maxEqLimit    = 1024 // XDL_MAX_EQLIMIT
	simscanWindow = 100  // XDL_SIMSCAN_WINDOW
	kpdisRun      = 4    // XDL_KPDIS_RUN
)

// counter returns how often a symbol occurs in one file.
type counter func(int32) int

// occurrences returns counters of the symbols of a in b and of b in a.
// Symbols are small dense ints, so a slice indexed by symbol does it in
// one pass without hashing; when the symbols are sparse (a small diff
// inside a big merge) a map of the symbols that are asked about is used.
func occurrences(a, b []int32, ma, mb []int32) (inB, inA counter) {
	top := int32(0)
	for _, s := range a {
		top = max(top, s)
	}
	for _, s := range b {
		top = max(top, s)
	}
	if int(top) <= 4*(len(a)+len(b))+1024 {
		ca, cb := make([]int32, top+1), make([]int32, top+1)
		for _, s := range a {
			ca[s]++
		}
		for _, s := range b {
			cb[s]++
		}
		return func(s int32) int { return int(cb[s]) }, func(s int32) int { return int(ca[s]) }
	}
	count := func(asked, in []int32) counter {
		m := make(map[int32]int, len(asked))
		for _, s := range asked {
			m[s] = 0
		}
		for _, s := range in {
			if n, ok := m[s]; ok {
				m[s] = n + 1
			}
		}
		return func(s int32) int { return m[s] }
	}
	return count(ma, b), count(mb, a)
}

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
