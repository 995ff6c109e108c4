package merge

import "bytes"

// onlyAdded reports whether, in the base region b, both sides only added
// lines: the region holds no base line, or only base's last line when that
// line lacks its LF and both sides gave it the same line end before adding
// theirs (appending to such a file must end its last line first, which is
// no change of its content).
func (m *merger) onlyAdded(b, ls, rs span) bool {
	if b.len() == 0 {
		return true
	}
	if b.len() != 1 || b.hi != m.base.n() || ls.len() == 0 || rs.len() == 0 {
		return false
	}
	last := m.base.line(b.lo)
	if bytes.HasSuffix(last, []byte{'\n'}) {
		return false
	}
	l, r := m.local.line(ls.lo), m.remote.line(rs.lo)
	if !bytes.Equal(l, r) || !bytes.HasPrefix(l, last) {
		return false
	}
	end := string(l[len(last):])
	return end == "\n" || end == "\r\n"
}

// additionRuns returns, in the order they are written, the line runs that
// merge two sides' additions at one place (ls of local, rs of remote): the
// lines both additions start with, once; then what differs, remote's lines
// before local's, or only the longer when one holds the other as a
// contiguous run; then the lines both end with, once. So no line that
// both sides wrote at the same end of their additions is doubled, and
// nothing either side added is lost.
func (m *merger) additionRuns(ls, rs span) []run3 {
	l, r := m.local.sym[ls.lo:ls.hi], m.remote.sym[rs.lo:rs.hi]
	pre := 0
	for pre < len(l) && pre < len(r) && l[pre] == r[pre] {
		pre++
	}
	suf := 0
	for suf < len(l)-pre && suf < len(r)-pre && l[len(l)-1-suf] == r[len(r)-1-suf] {
		suf++
	}
	lm := span{ls.lo + pre, ls.hi - suf}
	rm := span{rs.lo + pre, rs.hi - suf}
	runs := []run3{{m.remote, span{rs.lo, rm.lo}}}
	switch {
	case lm.len() <= rm.len() && holds(r[pre:len(r)-suf], l[pre:len(l)-suf]):
		runs = append(runs, run3{m.remote, rm})
	case holds(l[pre:len(l)-suf], r[pre:len(r)-suf]):
		runs = append(runs, run3{m.local, lm})
	default:
		runs = append(runs, run3{m.remote, rm}, run3{m.local, lm})
	}
	return append(runs, run3{m.remote, span{rm.hi, rs.hi}})
}

// run3 is a run of lines of one of the merge's texts.
type run3 struct {
	t *text
	s span
}

// holds reports whether part occurs in all as a contiguous run (an empty
// part always does). It matches in linear time (a failure table of part,
// as in Knuth-Morris-Pratt), as the additions of two added files may be
// long.
func holds(all, part []int32) bool {
	if len(part) == 0 {
		return true
	}
	if len(part) > len(all) {
		return false
	}
	// back[i]: the length of the longest proper border of part[:i+1].
	back := make([]int, len(part))
	for i, k := 1, 0; i < len(part); i++ {
		for k > 0 && part[i] != part[k] {
			k = back[k-1]
		}
		if part[i] == part[k] {
			k++
		}
		back[i] = k
	}
	k := 0
	for _, s := range all {
		for k > 0 && s != part[k] {
			k = back[k-1]
		}
		if s == part[k] {
			k++
		}
		if k == len(part) {
			return true
		}
	}
	return false
}
