package merge

import "bytes"

// text is one file split into lines: line i is buf[start[i]:start[i+1]],
// and sym[i] its interned symbol.
type text struct {
	buf   []byte
	start []int // len(sym)+1 offsets
	sym   []int32
}

// n is the number of lines.
func (t *text) n() int { return len(t.sym) }

// lines returns the bytes of lines [from, from+count).
func (t *text) lines(from, count int) []byte {
	if count <= 0 {
		return nil
	}
	return t.buf[t.start[from]:t.start[from+count]]
}

// line returns the bytes of line i.
func (t *text) line(i int) []byte { return t.buf[t.start[i]:t.start[i+1]] }

// interner gives every distinct line one symbol, shared by the files of one
// merge so that a line comparison is an int comparison.
type interner struct {
	ids map[string]int32
}

func newInterner(sizeHint int) *interner {
	return &interner{ids: make(map[string]int32, sizeHint)}
}

// split cuts buf into lines and interns them. A final run without LF is a
// line of its own; empty content has no lines.
func (in *interner) split(buf []byte) *text {
	t := &text{buf: buf}
	est := bytes.Count(buf, []byte{'\n'}) + 1
	t.start = make([]int, 0, est+1)
	t.sym = make([]int32, 0, est)
	for off := 0; off < len(buf); {
		end := len(buf)
		if i := bytes.IndexByte(buf[off:], '\n'); i >= 0 {
			end = off + i + 1
		}
		t.start = append(t.start, off)
		t.sym = append(t.sym, in.intern(buf[off:end]))
		off = end
	}
	t.start = append(t.start, len(buf))
	return t
}

func (in *interner) intern(line []byte) int32 {
	// The string(line) conversion in a map index does not allocate.
	if id, ok := in.ids[string(line)]; ok {
		return id
	}
	id := int32(len(in.ids))
	in.ids[string(line)] = id
	return id
}
