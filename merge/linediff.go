package merge

import "bytes"

// Edit is one change of a two-way line diff: the old lines
// [OldStart, OldEnd) are replaced by the new lines [NewStart, NewEnd)
// (zero-based line numbers). Either range may be empty (an insertion, a
// deletion), not both; edits are in order, at least one unchanged line
// apart.
type Edit struct {
	OldStart, OldEnd int
	NewStart, NewEnd int
}

// lineDiffMargin is how many unchanged lines LineDiff keeps on each side
// of the changed region: room for the placement of runs (slide.go), which
// moves a run over equal lines (a blank line, a fence) by a line or two.
const lineDiffMargin = 16

// LineDiff returns the edits that turn old into new. It is the diff the
// merge, Stat and Unified use, with the same line rule (a final run without
// LF is a line; nothing is normalised), so that a per-line history built on
// it (blame) and a patch (log -p) agree on which lines a change touched.
// Equal inputs give no edit.
//
// Versions of one note differ in a few places: the lines both start and end
// with are set aside by comparing bytes, before any line is split or
// hashed, and only the region between them (with lineDiffMargin unchanged
// lines on each side) is diffed, so a one-line change to a 2,000-line note
// costs a comparison of its bytes, not a split of its lines. Where an edit
// reaches the edge of that region, the placement of runs might have moved
// it further with the whole texts in view; then the whole texts are diffed,
// so the result is always the whole-text diff.
func LineDiff(old, new []byte) []Edit {
	if bytes.Equal(old, new) {
		return nil
	}
	// The common prefix, cut back to a line start (the same in both).
	p := bytes.LastIndexByte(old[:CommonPrefix(old, new)], '\n') + 1
	// The common suffix, moved forward to a line start in both: the bytes
	// after the cut are equal, so one LF search serves both texts.
	s := CommonSuffix(old[p:], new[p:])
	qo, qn := len(old)-s, len(new)-s
	if !lineStart(old, qo) || !lineStart(new, qn) {
		qo, qn = nextLine(old, qo, qn, len(new))
	}
	for range lineDiffMargin {
		if p == 0 {
			break
		}
		p = bytes.LastIndexByte(old[:p-1], '\n') + 1
	}
	for range lineDiffMargin {
		if qo == len(old) {
			break
		}
		qo, qn = nextLine(old, qo, qn, len(new))
	}
	if p == 0 && qo == len(old) {
		return wholeLineDiff(old, new)
	}
	ow, nw := old[p:qo], new[p:qn]
	edits := wholeLineDiff(ow, nw)
	first, last := edits[0], edits[len(edits)-1]
	if (p > 0 && (first.OldStart == 0 || first.NewStart == 0)) ||
		(qo < len(old) && (last.OldEnd == CountLines(ow) || last.NewEnd == CountLines(nw))) {
		return wholeLineDiff(old, new)
	}
	pre := bytes.Count(old[:p], []byte{'\n'})
	for i := range edits {
		edits[i].OldStart += pre
		edits[i].OldEnd += pre
		edits[i].NewStart += pre
		edits[i].NewEnd += pre
	}
	return edits
}

// wholeLineDiff is LineDiff without setting anything aside.
func wholeLineDiff(old, new []byte) []Edit {
	in := newInterner()
	a, b := in.split(old), in.split(new)
	changes := newDiffer(in.nsym()).lineDiff(a.sym, b.sym)
	out := make([]Edit, len(changes))
	for i, c := range changes {
		out[i] = Edit{OldStart: c.old.lo, OldEnd: c.old.hi, NewStart: c.new.lo, NewEnd: c.new.hi}
	}
	return out
}

// lineStart reports whether offset i of buf starts a line (or is its end).
func lineStart(buf []byte, i int) bool { return i == 0 || buf[i-1] == '\n' }

// nextLine moves the equal tails old[qo:] and new[qn:] to the start of
// their next line (their ends when there is none).
func nextLine(old []byte, qo, qn, lenNew int) (int, int) {
	k := bytes.IndexByte(old[qo:], '\n')
	if k < 0 {
		return len(old), lenNew
	}
	return qo + k + 1, qn + k + 1
}
