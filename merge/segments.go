package merge

import "slices"

// segKind says how a segment is written.
type segKind uint8

const (
	// bothHave: lines local and remote have alike (unchanged from base,
	// changed the same way on both sides, or common to the two sides of a
	// conflict). Written once.
	bothHave   segKind = iota
	localOnly          // only local changed these base lines: local's lines
	remoteOnly         // only remote changed them: remote's lines
	added              // both only inserted lines at one place (Text only)
	conflict           // different changes that overlap or touch
)

// segment is one stretch of the merge. Segments tile both sides: in order,
// their local spans cover local's lines and their remote spans remote's.
type segment struct {
	kind          segKind
	local, remote span
}

// merger holds one text merge's inputs and segments.
type merger struct {
	d                   *differ
	base, local, remote *text
	strict              bool
	segs                []segment
	// While untangle tries a diff, trying is set, and a region that would
	// conflict sets tangled instead of being refined.
	trying, tangled bool
}

func (m *merger) add(k segKind, l, r span) {
	if l.len() == 0 && r.len() == 0 {
		return
	}
	m.segs = append(m.segs, segment{k, l, r})
}

// window is the part of the three texts being cut: base lines base stand
// for local lines local and remote lines remote.
type window struct{ base, local, remote span }

// cut walks the two diffs of base over window w (el: base to local, er:
// base to remote, in the texts' line numbers) in base order and turns them
// into segments.
func (m *merger) cut(w window, el, er []change) {
	regs := regions(w, el, er)
	prev := window{span{w.base.lo, w.base.lo}, span{w.local.lo, w.local.lo}, span{w.remote.lo, w.remote.lo}}
	for i := 0; i < len(regs); {
		// A cluster: regions that few unchanged base lines separate,
		// which another choice of diff may cut differently.
		j := i + 1
		for j < len(regs) && regs[j].w.base.lo-regs[j-1].w.base.hi <= clusterGap {
			j++
		}
		m.add(bothHave, span{prev.local.hi, regs[i].w.local.lo}, span{prev.remote.hi, regs[i].w.remote.lo})
		if m.trying || !m.untangles(regs[i:j]) {
			for k := i; k < j; k++ {
				if k > i {
					m.add(bothHave, span{regs[k-1].w.local.hi, regs[k].w.local.lo}, span{regs[k-1].w.remote.hi, regs[k].w.remote.lo})
				}
				m.region(regs[k])
			}
		}
		prev, i = regs[j-1].w, j
	}
	m.add(bothHave, span{prev.local.hi, w.local.hi}, span{prev.remote.hi, w.remote.hi})
}

// clusterGap is the most unchanged base lines between two regions that
// untangle considers together: as many as rule 4 lets separate two blocks
// that are joined. Measured both ways: on 12,000 generated merges
// (four seeds) clusters spanning 3 lines rather than 1 agreed with one
// more of git's 5,514 clean merges and were clean on five more of its
// 6,486 conflicts; on 560 files both parents of a real merge commit
// changed (three public documentation repositories), with one more of
// git's 444 clean merges (a deleted paragraph two blank lines away from a
// heading the other side renamed), and never clean where git conflicts.
const clusterGap = 3

// region is one stretch of base that one side or both changed, with the
// lines each side wrote for it and the edits each made there (maybe none).
type region struct {
	w      window
	el, er []change
}

// regions groups the two diffs of base over window w into regions.
//
// Two sides' changes stay apart only when at least one base line that
// neither changed lies between them: an edit joins the region being built
// when it starts at or before the region's end, so touching changes (an
// insertion just after a line the other side rewrote, say) fall into one
// region.
func regions(w window, el, er []change) []region {
	// Sized for the most regions there can be: slices grown by append
	// would leave their old copies in a process that never collects.
	out := make([]region, 0, len(el)+len(er))
	// Side line minus base line, outside the edits.
	dl, dr := w.local.lo-w.base.lo, w.remote.lo-w.base.lo
	for len(el) > 0 || len(er) > 0 {
		lo := int(^uint(0) >> 1)
		if len(el) > 0 {
			lo = el[0].old.lo
		}
		if len(er) > 0 {
			lo = min(lo, er[0].old.lo)
		}
		hi, nl, nr := lo, 0, 0
		for grew := true; grew; {
			grew = false
			if nl < len(el) && el[nl].old.lo <= hi {
				hi, nl, grew = max(hi, el[nl].old.hi), nl+1, true
			}
			if nr < len(er) && er[nr].old.lo <= hi {
				hi, nr, grew = max(hi, er[nr].old.hi), nr+1, true
			}
		}
		ls, ndl := sideSpan(el[:nl], lo, hi, dl)
		rs, ndr := sideSpan(er[:nr], lo, hi, dr)
		out = append(out, region{window{span{lo, hi}, ls, rs}, el[:nl], er[:nr]})
		el, er, dl, dr = el[nl:], er[nr:], ndl, ndr
	}
	return out
}

// sideSpan returns the lines of one side that stand for base lines [lo, hi)
// given that side's edits there (maybe none) and its shift before them,
// and the shift after them.
func sideSpan(es []change, lo, hi, shift int) (span, int) {
	if len(es) == 0 {
		return span{lo + shift, hi + shift}, shift
	}
	first, last := es[0], es[len(es)-1]
	after := last.new.hi - last.old.hi
	return span{first.new.lo - (first.old.lo - lo), hi + after}, after
}

// clash reports whether a region conflicts: both sides changed it, not
// alike, and (for Text) not only by adding lines.
func (m *merger) clash(g region) bool {
	ls, rs := g.w.local, g.w.remote
	return len(g.el) > 0 && len(g.er) > 0 &&
		!slices.Equal(m.local.sym[ls.lo:ls.hi], m.remote.sym[rs.lo:rs.hi]) &&
		(m.strict || !m.onlyAdded(g.w.base, ls, rs))
}

// untangles tries other diffs over a cluster whose regions conflict
// (untangle). A cluster that git's rules conflict on is first untangled by
// those rules, even where Text's own rules would make it clean: where
// TextStrict finds a clean merge, Text must give the same bytes (rules 6
// and 7 only decide what rules 1-5 conflict on). Only then does Text try
// diffs that its own rules make clean.
func (m *merger) untangles(gs []region) bool {
	own := m.strict
	m.strict = true
	clean := m.clashes(gs) && m.untangle(gs)
	m.strict = own
	return clean || !own && m.clashes(gs) && m.untangle(gs)
}

func (m *merger) clashes(gs []region) bool {
	for _, g := range gs {
		if m.clash(g) {
			return true
		}
	}
	return false
}

// region writes the segment of one region: a region changed by one side
// only takes that side's lines; one changed alike by both is taken once;
// otherwise it conflicts, unless Text finds both sides only added lines
// there (additions.go).
func (m *merger) region(g region) {
	ls, rs := g.w.local, g.w.remote
	switch {
	case len(g.er) == 0:
		m.add(localOnly, ls, rs)
	case len(g.el) == 0:
		m.add(remoteOnly, ls, rs)
	case !m.clash(g) && slices.Equal(m.local.sym[ls.lo:ls.hi], m.remote.sym[rs.lo:rs.hi]):
		m.add(bothHave, ls, rs) // the same change on both sides, taken once
	case !m.clash(g):
		m.add(added, ls, rs)
	case m.trying:
		m.tangled = true
	default:
		m.refine(ls, rs)
	}
}

// untangle tries other, equally short, diffs of base against each side
// over a cluster of regions where the two sides' changes touch, and cuts
// the cluster with the first pair that leaves no conflict. It reports
// whether it found one.
//
// go-diff picks one of the shortest diffs; when a side's lines could
// match base's in several ways (which of two blank lines an added block
// takes, say), its pick for one side may place an edit that both sides
// made alike so that it touches the other side's change, while another
// pick keeps them apart. The reference merge would then be clean, so the
// merge here prefers, among equally short diffs, one that keeps the sides'
// changes apart: the cluster is diffed again on its own, from the start
// and from the end (lineDiffFromEnd), and the pairs of those diffs that
// change no more lines than the first are tried in turn.
func (m *merger) untangle(gs []region) bool {
	first, last := gs[0].w, gs[len(gs)-1].w
	w := window{span{first.base.lo, last.base.hi}, span{first.local.lo, last.local.hi}, span{first.remote.lo, last.remote.hi}}
	el, er := 0, 0
	for _, g := range gs {
		el, er = el+size(g.el), er+size(g.er)
	}
	b := m.base.sym[w.base.lo:w.base.hi]
	l := m.local.sym[w.local.lo:w.local.hi]
	r := m.remote.sym[w.remote.lo:w.remote.hi]
	var ls, rs [][]change
	for _, cs := range [][]change{m.d.lineDiff(b, l), m.d.lineDiffFromEnd(b, l)} {
		if size(cs) <= el {
			ls = append(ls, shift(cs, w.base.lo, w.local.lo))
		}
	}
	for _, cs := range [][]change{m.d.lineDiff(b, r), m.d.lineDiffFromEnd(b, r)} {
		if size(cs) <= er {
			rs = append(rs, shift(cs, w.base.lo, w.remote.lo))
		}
	}
	keep := len(m.segs)
	for _, l := range ls {
		for _, r := range rs {
			m.trying, m.tangled = true, false
			m.cut(w, l, r)
			m.trying = false
			if !m.tangled {
				return true
			}
			m.segs = m.segs[:keep]
		}
	}
	return false
}

// size is the number of lines a diff removes and adds.
func size(cs []change) int {
	n := 0
	for _, c := range cs {
		n += c.old.len() + c.new.len()
	}
	return n
}

// shift moves a diff of a region to the texts' line numbers.
func shift(cs []change, old, new int) []change {
	for i := range cs {
		cs[i].old.lo += old
		cs[i].old.hi += old
		cs[i].new.lo += new
		cs[i].new.hi += new
	}
	return cs
}

// refine cuts a conflict region into the lines its two sides share, written
// once outside any block, and the pieces where they differ, each a block:
// the sides are diffed against each other like any two versions.
func (m *merger) refine(ls, rs span) {
	es := m.d.lineDiff(m.local.sym[ls.lo:ls.hi], m.remote.sym[rs.lo:rs.hi])
	i, j := ls.lo, rs.lo
	for _, e := range es {
		m.add(bothHave, span{i, ls.lo + e.old.lo}, span{j, rs.lo + e.new.lo})
		i, j = ls.lo+e.old.hi, rs.lo+e.new.hi
		m.add(conflict, span{ls.lo + e.old.lo, i}, span{rs.lo + e.new.lo, j})
	}
	m.add(bothHave, span{i, ls.hi}, span{j, rs.hi})
}

// join merges conflict blocks that only a few shared lines separate: at
// most three, or any number without an ASCII letter or digit (blank lines,
// rules, fences, braces). A reader resolves one block more easily than two
// cut by a line of punctuation. A clean change of one side between two
// blocks keeps them apart. This shapes blocks only; whether the merge is
// clean does not change.
func (m *merger) join() {
	out := m.segs[:0]
	for i := 0; i < len(m.segs); {
		s := m.segs[i]
		i++
		if s.kind != conflict {
			out = append(out, s)
			continue
		}
		for {
			k := i
			for k < len(m.segs) && m.segs[k].kind == bothHave {
				k++
			}
			if k == len(m.segs) || m.segs[k].kind != conflict || !m.thinSeparator(m.segs[i:k]) {
				break
			}
			s.local.hi, s.remote.hi = m.segs[k].local.hi, m.segs[k].remote.hi
			i = k + 1
		}
		out = append(out, s)
	}
	m.segs = out
}

// thinSeparator reports whether the shared lines of segs are few enough,
// or bare enough, for the blocks on either side to be joined.
func (m *merger) thinSeparator(segs []segment) bool {
	n := 0
	for _, s := range segs {
		n += s.local.len()
	}
	if n <= 3 {
		return true
	}
	for _, s := range segs {
		for i := s.local.lo; i < s.local.hi; i++ {
			if hasLetterOrDigit(m.local.line(i)) {
				return false
			}
		}
	}
	return true
}

func hasLetterOrDigit(line []byte) bool {
	for _, c := range line {
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}
