package merge

import "bytes"

// Conflict markers. Marker lines end in LF, or CRLF when the lines around
// the block do (see markerCRLF).
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

// Text merges local and remote edits of base line by line (diff3), byte for
// byte, with conflict blocks marked "<<<<<<< local", "=======", ">>>>>>> remote".
// It applies the notebook's rule for concurrent additions (DESIGN §4 rule
// 6): lines both sides only inserted at one place are all kept, remote's
// first. Content may share memory with the inputs when one side is
// unchanged.
func Text(base, local, remote []byte) TextResult { return merge3(base, local, remote, false) }

// TextStrict merges as Text does but without rule 6: two insertions at one
// place conflict, as they do for `git merge-file`.
func TextStrict(base, local, remote []byte) TextResult { return merge3(base, local, remote, true) }

func merge3(base, local, remote []byte, strict bool) TextResult {
	// An unchanged side contributes nothing.
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
	merged := join(l, r, refine(d, l, r, rs))
	if strict || clean(merged) || !additions(rs, merged) {
		return write(b, l, r, merged)
	}
	// Rule 6 turned some conflicts of rs into additions: merge again.
	return write(b, l, r, join(l, r, refine(d, l, r, rs)))
}

// additions applies rule 6 to rs, the regions before refinement, given
// merged, their refined and joined form under rules 1-5: each region where
// both sides only inserted lines becomes an addBoth, unless its lines are
// part of a block whose sides came out equal (the two diffs of base placed
// one change differently: rule 3 has made that clean already). It reports
// whether it changed any region.
func additions(rs, merged []region) bool {
	changed := false
	k := 0
	for i, m := range rs {
		if !m.adds {
			continue
		}
		for k < len(merged) && merged[k].l0+merged[k].ln <= m.l0 && merged[k].l0 < m.l0 {
			k++ // wholly before m
		}
		agreed := false
		for j := k; j < len(merged) && merged[j].l0 < m.l0+m.ln; j++ {
			agreed = agreed || merged[j].agreed && m.l0 < merged[j].l0+merged[j].ln
		}
		if agreed {
			continue
		}
		rs[i].kind = addBoth
		rs[i].l0, rs[i].ln = m.l0+m.fixed, m.ln-m.fixed
		rs[i].r0, rs[i].rn = m.r0+m.fixed, m.rn-m.fixed
		changed = true
	}
	return changed
}

func clean(rs []region) bool {
	for _, m := range rs {
		if m.kind == conflict {
			return false
		}
	}
	return true
}

// What a region of the merge writes in place of local's lines.
type kind uint8

const (
	keepLocal  kind = iota // only local changed here, or both sides alike
	takeRemote             // only remote changed: remote's lines
	conflict               // a conflict block of both sides' lines
	addBoth                // both only inserted here (rule 6): see writer.additions
)

// region is one stretch of the merge where a side changed: local lines
// [l0, l0+ln) and remote lines [r0, r0+rn).
type region struct {
	kind   kind
	l0, ln int
	r0, rn int
	// adds marks a conflict where both sides only inserted lines (rule
	// 6), after their first fixed lines (see finalLineEnded).
	adds  bool
	fixed int
	// agreed marks a block whose joined sides came out equal (join).
	agreed bool
}

// regions groups the two sides' hunks into regions, walking them in base
// order. A region is a hunk and every hunk of the other side that overlaps
// or touches it, repeatedly (rule 2: only an unchanged base line between
// two changes keeps them apart). Its kind follows from which sides it has
// hunks of and whether their lines are equal (rule 3); a conflict of only
// insertions at one base position is marked for rule 6.
func regions(d *differ, b, l, r *text) []region {
	hl, hr := d.diff(b.sym, l.sym), d.diff(b.sym, r.sym)
	rs := make([]region, 0, len(hl)+len(hr))
	offL, offR := 0, 0 // a side's line number minus base's, after the hunks so far
	for len(hl) > 0 || len(hr) > 0 {
		var s, e int // the region's base lines
		if len(hr) == 0 || len(hl) > 0 && hl[0].i1 <= hr[0].i1 {
			s = hl[0].i1
		} else {
			s = hr[0].i1
		}
		e = s
		nl, nr := 0, 0 // the hunks of each side in the region
		for {
			if nl < len(hl) && hl[nl].i1 <= e {
				e = max(e, hl[nl].i1+hl[nl].chg1)
				nl++
			} else if nr < len(hr) && hr[nr].i1 <= e {
				e = max(e, hr[nr].i1+hr[nr].chg1)
				nr++
			} else {
				break
			}
		}
		lStart, lEnd := span(hl[:nl], s, e, &offL)
		rStart, rEnd := span(hr[:nr], s, e, &offR)
		m := region{l0: lStart, ln: lEnd - lStart, r0: rStart, rn: rEnd - rStart}
		skip := false
		switch {
		case nl == 0:
			m.kind = takeRemote
		case nr == 0:
			m.kind = keepLocal
		case bytes.Equal(l.lines(m.l0, m.ln), r.lines(m.r0, m.rn)):
			// The same change on both sides: as if one side made it,
			// unless it took several hunks of a side to make it the same.
			m.kind = keepLocal
			skip = nl == 1 && nr == 1
		default:
			m.kind = conflict
			if s == e {
				m.adds = true
			} else if finalLineEnded(b, l, r, s, e, m) {
				// Appending to a last line without LF gives it one on
				// both sides alike; that is not a change of the line.
				m.adds, m.fixed = true, 1
			}
		}
		if !skip {
			rs = append(rs, m)
		}
		hl, hr = hl[nl:], hr[nr:]
	}
	return rs
}

// span returns the lines of one side that correspond to base lines [s, e),
// given the side's hunks there, and updates off past them.
func span(hs []hunk, s, e int, off *int) (start, end int) {
	if len(hs) == 0 {
		return s + *off, e + *off
	}
	first, last := hs[0], hs[len(hs)-1]
	start = s + first.i2 - first.i1
	*off = last.i2 + last.chg2 - last.i1 - last.chg1
	return start, e + *off
}

// finalLineEnded reports whether base lines [s, e) are base's last line,
// which lacks an LF, and both sides of m begin with that line ended.
func finalLineEnded(b, l, r *text, s, e int, m region) bool {
	if s != b.n()-1 || e != b.n() || m.ln == 0 || m.rn == 0 || !bytes.Equal(l.line(m.l0), r.line(m.r0)) {
		return false
	}
	last, line := b.line(s), l.line(m.l0)
	if last[len(last)-1] == '\n' || !bytes.HasPrefix(line, last) {
		return false
	}
	end := string(line[len(last):])
	return end == "\n" || end == "\r\n"
}

// refine shrinks each conflict to the lines where local and remote really
// differ (rule 4): the two sides are diffed against each other, each hunk
// of that diff is a conflict and the lines between stay outside the
// blocks. A conflict whose sides are equal after all is clean.
func refine(d *differ, l, r *text, rs []region) []region {
	out := make([]region, 0, len(rs))
	for _, m := range rs {
		if m.kind != conflict || m.ln == 0 || m.rn == 0 {
			out = append(out, m)
			continue
		}
		hs := d.diff(l.sym[m.l0:m.l0+m.ln], r.sym[m.r0:m.r0+m.rn])
		if len(hs) == 0 {
			m.kind = keepLocal
			out = append(out, m)
			continue
		}
		for _, h := range hs {
			out = append(out, region{kind: conflict, l0: m.l0 + h.i1, ln: h.chg1, r0: m.r0 + h.i2, rn: h.chg2})
		}
	}
	return out
}

// join makes one block of two conflicts in a row when at most 3 lines, or
// only lines without an ASCII letter or digit, separate them (rule 4): one
// block reads better than blocks split by a blank line or a brace.
func join(l, r *text, rs []region) []region {
	if len(rs) == 0 {
		return rs
	}
	out := rs[:1]
	for _, n := range rs[1:] {
		m := &out[len(out)-1]
		from, to := m.l0+m.ln, n.l0
		if m.kind != conflict || n.kind != conflict || (to-from > 3 && hasAlnum(l.lines(from, to-from))) {
			out = append(out, n)
			continue
		}
		m.ln = n.l0 + n.ln - m.l0
		m.rn = n.r0 + n.rn - m.r0
	}
	// Two diffs of base can place one identical change differently (each
	// is as short as the other), so the pieces of a joined block can add
	// up to equal sides: then both sides agree on these lines (rule 3).
	for i, m := range out {
		if m.kind == conflict && bytes.Equal(l.lines(m.l0, m.ln), r.lines(m.r0, m.rn)) {
			out[i].kind, out[i].agreed = keepLocal, true
		}
	}
	return out
}

func hasAlnum(b []byte) bool {
	for _, c := range b {
		if '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// write renders the merge: local's lines, with each region's lines in
// place of local's there, and the line range of every conflict block.
func write(b, l, r *text, rs []region) TextResult {
	w := writer{out: make([]byte, 0, outputSize(l, r, rs))}
	i := 0 // the next local line to write
	for _, m := range rs {
		w.put(l.lines(i, m.l0-i))
		switch m.kind {
		case keepLocal:
			w.put(l.lines(m.l0, m.ln))
		case takeRemote:
			w.put(r.lines(m.r0, m.rn))
		case addBoth:
			w.additions(l, r, m)
		case conflict:
			w.block(l.lines(m.l0, m.ln), r.lines(m.r0, m.rn), markerCRLF(b, l, r, m))
		}
		i = m.l0 + m.ln
	}
	w.put(l.lines(i, l.n()-i))
	return TextResult{Content: w.out, Conflicts: w.ranges}
}

// outputSize is the size of write's output, or an upper bound of it: a
// 1 MB note is written into one buffer that is neither grown nor much
// larger than needed.
func outputSize(l, r *text, rs []region) int {
	n := len(l.buf)
	for _, m := range rs {
		switch m.kind {
		case conflict:
			// Both sides, three markers, and at most six line ends
			// added (see block), each CRLF at most.
			n += len(r.lines(m.r0, m.rn)) + len(markerLocal) + len(markerSep) + len(markerRemote) + 6*2
		case addBoth:
			n += len(r.lines(m.r0, m.rn)) + 2
		case takeRemote:
			n += len(r.lines(m.r0, m.rn)) - len(l.lines(m.l0, m.ln))
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

// additions writes the lines both sides inserted at one place (rule 6):
// remote's, then local's; only once when they are equal, or when one
// side's run is the start or the end of the other's.
func (w *writer) additions(l, r *text, m region) {
	ls, rs := l.sym[m.l0:m.l0+m.ln], r.sym[m.r0:m.r0+m.rn]
	switch {
	case contains(rs, ls):
		w.put(r.lines(m.r0, m.rn))
	case contains(ls, rs):
		w.put(l.lines(m.l0, m.ln))
	default:
		rl := r.lines(m.r0, m.rn)
		w.put(rl)
		if rl[len(rl)-1] != '\n' {
			// Remote's last line ended the file; local's follow it, so
			// it gets the line end of the lines before it.
			w.put(eol(endsCRLF(r, m.r0+m.rn-1) > 0 || m.rn == 1 && endsCRLF(l, max(m.l0-1, 0)) > 0))
		}
		w.put(l.lines(m.l0, m.ln))
	}
}

// contains reports whether part is a run at the start or at the end of all.
func contains(all, part []int32) bool {
	if len(part) > len(all) {
		return false
	}
	return equalSyms(all[:len(part)], part) || equalSyms(all[len(all)-len(part):], part)
}

func equalSyms(a, b []int32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (w *writer) block(local, remote []byte, crlf bool) {
	if len(w.out) > 0 && w.out[len(w.out)-1] != '\n' {
		// Keeps markers at column 0 (a skeleton line before a block
		// always has its LF, but the scanner must be able to rely on it).
		w.put(eol(crlf))
	}
	start := w.countLines() + 1
	w.marker(markerLocal, crlf)
	w.side(local, crlf)
	w.marker(markerSep, crlf)
	w.side(remote, crlf)
	w.marker(markerRemote, crlf)
	w.ranges = append(w.ranges, Range{Start: start, End: w.countLines()})
}

// countLines returns the number of LFs written so far.
func (w *writer) countLines() int {
	w.lines += bytes.Count(w.out[w.counted:], []byte{'\n'})
	w.counted = len(w.out)
	return w.lines
}

func (w *writer) marker(m string, crlf bool) {
	w.out = append(w.out, m...)
	w.put(eol(crlf))
}

// side writes one side of a block; a last line without LF gets one so the
// next marker starts a line (rule 5).
func (w *writer) side(b []byte, crlf bool) {
	w.put(b)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		w.put(eol(crlf))
	}
}

func eol(crlf bool) []byte {
	if crlf {
		return []byte("\r\n")
	}
	return []byte("\n")
}

// markerCRLF decides the line ending of a block's markers (rule 5, as
// observed on git's output): CRLF when the local line before the block,
// the remote line before it and base's first line all end in CRLF. A file
// whose line there says nothing (no lines, or one line without LF) is
// skipped, except base, which must say CRLF.
func markerCRLF(b, l, r *text, m region) bool {
	for _, t := range []struct {
		t    *text
		line int
	}{{l, m.l0 - 1}, {r, m.r0 - 1}} {
		if endsCRLF(t.t, max(t.line, 0)) == 0 {
			return false
		}
	}
	return endsCRLF(b, 0) > 0
}

// endsCRLF tells how line i of t ends, the last line by the one before it
// if it has no LF: 1 CRLF, 0 LF, -1 no line to tell by.
func endsCRLF(t *text, i int) int {
	if i >= t.n() {
		return -1
	}
	line := t.line(i)
	if line[len(line)-1] != '\n' {
		if i == 0 {
			return -1
		}
		line = t.line(i - 1)
	}
	if bytes.HasSuffix(line, []byte("\r\n")) {
		return 1
	}
	return 0
}
