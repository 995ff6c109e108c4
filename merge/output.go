package merge

import "bytes"

// Marker lines of a conflict block.
const (
	markerLocal  = "<<<<<<< local"
	markerSep    = "======="
	markerRemote = ">>>>>>> remote"
)

// output collects the merged bytes and counts their lines, so that each
// block's line range is known as it is written.
type output struct {
	buf       []byte
	lines     int
	conflicts []Range
}

// put appends lines s of t.
func (o *output) put(t *text, s span) {
	if s.len() > 0 {
		o.buf = append(o.buf, t.lines(s.lo, s.len())...)
		o.lines += s.len()
	}
}

// putEnded appends lines s of t and, when the last of them lacks its LF
// and more follows, the line end eol.
func (o *output) putEnded(t *text, s span, eol string) {
	o.put(t, s)
	if s.len() > 0 && !bytes.HasSuffix(o.buf, []byte{'\n'}) {
		o.buf = append(o.buf, eol...)
	}
}

func (o *output) marker(m, eol string) {
	o.buf = append(o.buf, m...)
	o.buf = append(o.buf, eol...)
	o.lines++
}

// write produces the merged content from the segments. Every local and
// remote line is written at most once, plus markers and line ends, which
// bounds the buffer; pages never written are never touched.
func (m *merger) write() TextResult {
	o := output{buf: make([]byte, 0, len(m.local.buf)+len(m.remote.buf)+64)}
	for _, s := range m.segs {
		switch s.kind {
		case bothHave, localOnly:
			o.put(m.local, s.local)
		case remoteOnly:
			o.put(m.remote, s.remote)
		case added:
			eol := m.lineEnd(s)
			runs := m.additionRuns(s.local, s.remote)
			// A run's last line lacking its LF gets one only when
			// another run's lines follow it.
			for i, r := range runs {
				follows := false
				for _, next := range runs[i+1:] {
					follows = follows || next.s.len() > 0
				}
				if follows {
					o.putEnded(r.t, r.s, eol)
				} else {
					o.put(r.t, r.s)
				}
			}
		case conflict:
			eol := m.lineEnd(s)
			start := o.lines + 1
			o.marker(markerLocal, eol)
			o.putEnded(m.local, s.local, eol)
			o.marker(markerSep, eol)
			o.putEnded(m.remote, s.remote, eol)
			o.marker(markerRemote, eol)
			o.conflicts = append(o.conflicts, Range{Start: start, End: o.lines})
		}
	}
	return TextResult{Content: o.buf, Conflicts: o.conflicts}
}

// lineEnd is the line end of the marker lines around segment s, and of a
// line that lacks one inside it: CRLF when the file's lines there end in
// CRLF, else LF. The lines looked at are base's first line and, on each
// side, the line before the segment (the segment's first line at the top
// of the file); a side's line without any end does not count against CRLF,
// a side with no line to look at does.
func (m *merger) lineEnd(s segment) string {
	crlf := func(l []byte) bool { return bytes.HasSuffix(l, []byte("\r\n")) }
	if m.base.n() == 0 || !crlf(m.base.line(0)) {
		return "\n"
	}
	for _, side := range []struct {
		t *text
		s span
	}{{m.local, s.local}, {m.remote, s.remote}} {
		var l []byte
		switch {
		case side.s.lo > 0:
			l = side.t.line(side.s.lo - 1)
		case side.s.len() > 0:
			l = side.t.line(side.s.lo)
		default:
			return "\n"
		}
		if bytes.HasSuffix(l, []byte{'\n'}) && !crlf(l) {
			return "\n"
		}
	}
	return "\r\n"
}
