package merge

import "bytes"

// Conflict markers. Marker lines end in LF, or CRLF when the lines around
// the block do (see needsCR).
const (
	markerLocal  = "<<<<<<< local"
	markerSep    = "======="
	markerRemote = ">>>>>>> remote"
)

// Range is a one-based, inclusive line range.
type Range struct {
	Start int
	End   int
}

// TextResult is the outcome of a three-way text merge. Conflicts holds the
// line range of every conflict block written into Content, in order; it is
// empty for a clean merge.
type TextResult struct {
	Content   []byte
	Conflicts []Range
}

// Region kinds of a merge, as in git's xdiff/xmerge.c.
const (
	regionConflict  = 0 // both sides changed: a conflict block
	regionLocal     = 1 // only local changed: already in the skeleton
	regionRemote    = 2 // only remote changed: remote's lines replace local's
	regionIdentical = 4 // a conflict whose sides turned out equal: clean
)

// region is one changed stretch of the merge. Base lines [i0, i0+chg0)
// correspond to local lines [i1, i1+chg1) and remote lines [i2, i2+chg2).
// After refinement i0 and chg0 are stale; only i1.. and i2.. are used.
type region struct {
	kind               int
	i0, chg0           int
	i1, chg1, i2, chg2 int
}

// Text merges local and remote edits of base line by line (diff3), byte for
// byte, with conflict blocks marked "<<<<<<< local", "=======", ">>>>>>> remote".
// Content may share memory with the inputs when one side is unchanged.
func Text(base, local, remote []byte) TextResult {
	// Fast paths: an unchanged side contributes nothing (git: empty script).
	if bytes.Equal(local, base) {
		return TextResult{Content: remote}
	}
	if bytes.Equal(remote, base) || bytes.Equal(local, remote) {
		return TextResult{Content: local}
	}
	in := newInterner()
	b, l, r := in.split(base), in.split(local), in.split(remote)
	d := newDiffer(in.nsym())
	rs := regions(d, b, l, r)
	rs = refine(d, l, r, rs)
	rs = joinConflicts(l, rs)
	return write(b, l, r, rs)
}

// regions walks the hunks of base->local and base->remote in base order
// (git's xdl_do_merge). Hunks separated by at least one unchanged base line
// are one-sided; identical hunks are taken once; anything else that touches
// or overlaps is a conflict, grown to cover every hunk it touches.
func regions(d *differ, b, l, r *text) []region {
	h1, h2 := d.diff(b.sym, l.sym), d.diff(b.sym, r.sym)
	rs := make([]region, 0, len(h1)+len(h2)) // folding only shrinks it
	for len(h1) > 0 && len(h2) > 0 {
		x, y := h1[0], h2[0]
		switch {
		case x.i1+x.chg1 < y.i1:
			rs = appendRegion(rs, region{regionLocal, x.i1, x.chg1, x.i2, x.chg2, y.i2 - y.i1 + x.i1, x.chg1})
			h1 = h1[1:]
			continue
		case y.i1+y.chg1 < x.i1:
			rs = appendRegion(rs, region{regionRemote, y.i1, y.chg1, x.i2 - x.i1 + y.i1, y.chg1, y.i2, y.chg2})
			h2 = h2[1:]
			continue
		}
		if x.i1 != y.i1 || x.chg1 != y.chg1 || !bytes.Equal(l.lines(x.i2, x.chg2), r.lines(y.i2, y.chg2)) {
			// Cover both hunks: extend the earlier-starting one's start and
			// the later-ending one's end onto the other side.
			off := x.i1 - y.i1
			ffo := off + x.chg1 - y.chg1
			i0, i1, i2 := x.i1, x.i2, y.i2
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := x.i1 + x.chg1 - i0
			chg1 := x.i2 + x.chg2 - i1
			chg2 := y.i2 + y.chg2 - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			rs = appendRegion(rs, region{regionConflict, i0, chg0, i1, chg1, i2, chg2})
		}
		e1, e2 := x.i1+x.chg1, y.i1+y.chg1
		if e1 >= e2 {
			h2 = h2[1:]
		}
		if e2 >= e1 {
			h1 = h1[1:]
		}
	}
	for _, x := range h1 {
		rs = appendRegion(rs, region{regionLocal, x.i1, x.chg1, x.i2, x.chg2, x.i1 + r.n() - b.n(), x.chg1})
	}
	for _, y := range h2 {
		rs = appendRegion(rs, region{regionRemote, y.i1, y.chg1, y.i1 + l.n() - b.n(), y.chg1, y.i2, y.chg2})
	}
	return rs
}

// appendRegion adds m, folding it into the last region when they touch on
// either side (git's xdl_append_merge); a fold of different kinds is a
// conflict.
func appendRegion(rs []region, m region) []region {
	if n := len(rs); n > 0 {
		p := &rs[n-1]
		if m.i1 <= p.i1+p.chg1 || m.i2 <= p.i2+p.chg2 {
			if m.kind != p.kind {
				p.kind = regionConflict
			}
			p.chg0 = m.i0 + m.chg0 - p.i0
			p.chg1 = m.i1 + m.chg1 - p.i1
			p.chg2 = m.i2 + m.chg2 - p.i2
			return rs
		}
	}
	return append(rs, m)
}

// refine shrinks each conflict to the lines where local and remote really
// differ: the two sides are diffed against each other and every hunk of
// that diff becomes its own conflict (git's xdl_refine_conflicts).
func refine(d *differ, l, r *text, rs []region) []region {
	out := make([]region, 0, len(rs))
	for _, m := range rs {
		if m.kind != regionConflict || m.chg1 == 0 || m.chg2 == 0 {
			// Nothing in common when one side is empty.
			out = append(out, m)
			continue
		}
		hs := d.diff(l.sym[m.i1:m.i1+m.chg1], r.sym[m.i2:m.i2+m.chg2])
		if len(hs) == 0 {
			m.kind = regionIdentical
			out = append(out, m)
			continue
		}
		for _, h := range hs {
			out = append(out, region{kind: regionConflict, i0: m.i0, chg0: m.chg0,
				i1: m.i1 + h.i1, chg1: h.chg1, i2: m.i2 + h.i2, chg2: h.chg2})
		}
	}
	return out
}

// joinConflicts joins neighbouring conflicts separated by at most 3 lines,
// or by lines without an ASCII letter or digit (git's
// xdl_simplify_non_conflicts at level "zealous alnum"): one block reads
// better than blocks split by a blank line or a brace.
func joinConflicts(l *text, rs []region) []region {
	if len(rs) == 0 {
		return rs
	}
	out := rs[:1]
	for _, n := range rs[1:] {
		m := &out[len(out)-1]
		begin, end := m.i1+m.chg1, n.i1
		if m.kind != regionConflict || n.kind != regionConflict ||
			(end-begin > 3 && containsAlnum(l.lines(begin, end-begin))) {
			out = append(out, n)
			continue
		}
		m.chg1 = n.i1 + n.chg1 - m.i1
		m.chg2 = n.i2 + n.chg2 - m.i2
	}
	return out
}

func containsAlnum(b []byte) bool {
	for _, c := range b {
		if '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// write renders the merge with local as the skeleton (git's
// xdl_fill_merge_buffer) and records each conflict block's line range.
func write(b, l, r *text, rs []region) TextResult {
	w := writer{out: make([]byte, 0, outputSize(l, r, rs))}
	i := 0 // next local line not yet written
	for _, m := range rs {
		switch m.kind {
		case regionConflict:
			w.put(l.lines(i, m.i1-i))
			cr := needsCR(b, l, r, m)
			w.block(l.lines(m.i1, m.chg1), r.lines(m.i2, m.chg2), cr)
		case regionLocal:
			w.put(l.lines(i, m.i1-i+m.chg1))
		case regionRemote:
			w.put(l.lines(i, m.i1-i))
			w.put(r.lines(m.i2, m.chg2))
		default:
			continue // identical sides: local's lines stay in the skeleton
		}
		i = m.i1 + m.chg1
	}
	w.put(l.lines(i, l.n()-i))
	return TextResult{Content: w.out, Conflicts: w.ranges}
}

// outputSize is the size of write's output for a clean merge, and an upper
// bound with conflicts: a 1 MB note is then written into one buffer that is
// neither grown nor much larger than needed.
func outputSize(l, r *text, rs []region) int {
	n := len(l.buf)
	for _, m := range rs {
		switch m.kind {
		case regionConflict:
			// Both sides, three markers, and at most six line ends
			// added (see block), each CRLF at most.
			n += len(r.lines(m.i2, m.chg2)) + len(markerLocal) + len(markerSep) + len(markerRemote) + 6*2
		case regionRemote:
			n += len(r.lines(m.i2, m.chg2)) - len(l.lines(m.i1, m.chg1))
		}
	}
	return n
}

// writer accumulates the output and counts its lines lazily.
type writer struct {
	out     []byte
	counted int // bytes of out whose LFs are in lines
	lines   int
	ranges  []Range
}

func (w *writer) put(b []byte) { w.out = append(w.out, b...) }

func (w *writer) block(local, remote []byte, cr bool) {
	if len(w.out) > 0 && w.out[len(w.out)-1] != '\n' {
		// Keeps markers at column 0. git would glue the marker to a last
		// line without LF, which a skeleton line before a block never is.
		w.put(eol(cr))
	}
	start := w.countLines() + 1
	w.marker(markerLocal, cr)
	w.side(local, cr)
	w.marker(markerSep, cr)
	w.side(remote, cr)
	w.marker(markerRemote, cr)
	w.ranges = append(w.ranges, Range{Start: start, End: w.countLines()})
}

// countLines returns the number of LFs written so far.
func (w *writer) countLines() int {
	w.lines += bytes.Count(w.out[w.counted:], []byte{'\n'})
	w.counted = len(w.out)
	return w.lines
}

func (w *writer) marker(m string, cr bool) {
	w.out = append(w.out, m...)
	w.put(eol(cr))
}

// side writes one side of a block; a last line without LF gets one so the
// next marker starts a line.
func (w *writer) side(b []byte, cr bool) {
	w.put(b)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		w.put(eol(cr))
	}
}

func eol(cr bool) []byte {
	if cr {
		return []byte("\r\n")
	}
	return []byte("\n")
}

// needsCR decides the line ending of a block's markers (git's is_cr_needed):
// CRLF when the local line before the block, the remote line before it and
// base's first line all end in CRLF; a file that cannot tell (empty, or a
// single line without LF) does not vote; undecided means LF.
func needsCR(b, l, r *text, m region) bool {
	v := eolCRLF(l, max(m.i1-1, 0))
	if v != 0 {
		v = eolCRLF(r, max(m.i2-1, 0))
	}
	if v != 0 {
		v = eolCRLF(b, 0)
	}
	return v > 0
}

// eolCRLF reports whether line i of t ends in CRLF: 1 yes, 0 no, -1 cannot tell.
func eolCRLF(t *text, i int) int {
	crlf := func(line []byte) int {
		if len(line) > 1 && line[len(line)-2] == '\r' {
			return 1
		}
		return 0
	}
	n := t.n()
	switch {
	case i < n-1:
		return crlf(t.line(i))
	case n == 0:
		return -1
	}
	if line := t.line(i); len(line) > 0 && line[len(line)-1] == '\n' {
		return crlf(line)
	}
	if i == 0 {
		return -1
	}
	return crlf(t.line(i - 1))
}
