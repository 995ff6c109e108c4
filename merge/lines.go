package merge

import (
	"bytes"
	"hash/maphash"
)

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
	table lineTable
	ref   *text
	// at is, per symbol, its only line number in the first file split
	// (the base), or -1 when that file has it more than once or not at all.
	at []int32
}

func newInterner() *interner { return &interner{} }

// split cuts buf into lines and interns them. A final run without LF is a
// line of its own; empty content has no lines.
//
// The first file split is the reference; a later one is walked alongside
// it, and a line equal to the reference's next line takes its symbol
// without hashing. After a line that differs, the walk resumes after the
// reference line it matches, if that line is unique there. Versions of one
// note share most lines in order, so nearly every line is matched this way
// and only changed lines are looked up.
func (in *interner) split(buf []byte) *text {
	ref := in.at == nil
	t := &text{buf: buf}
	est := bytes.Count(buf, []byte{'\n'}) + 1
	t.start = make([]int, 0, est+1)
	t.sym = make([]int32, 0, est)
	if ref {
		// Later files add only their changed lines to the table.
		in.ref, in.table = t, newLineTable(est+est/8)
	}
	cur := 0 // next reference line expected
	for off := 0; off < len(buf); {
		end := len(buf)
		if i := bytes.IndexByte(buf[off:], '\n'); i >= 0 {
			end = off + i + 1
		}
		line := buf[off:end]
		t.start = append(t.start, off)
		switch {
		case ref:
			t.sym = append(t.sym, in.intern(line, int32(len(t.sym))))
		case cur < in.ref.n() && bytes.Equal(line, in.ref.line(cur)):
			t.sym = append(t.sym, in.ref.sym[cur])
			cur++
		default:
			s := in.intern(line, -1)
			t.sym = append(t.sym, s)
			if int(s) < len(in.at) && in.at[s] >= 0 {
				cur = int(in.at[s]) + 1
			}
		}
		off = end
	}
	t.start = append(t.start, len(buf))
	if ref && in.at == nil {
		in.at = []int32{} // an empty reference still marks the first split done
	}
	return t
}

// intern returns the symbol of line; refLine is its line number when
// splitting the reference, -1 otherwise.
func (in *interner) intern(line []byte, refLine int32) int32 {
	id, added := in.table.intern(line)
	if refLine >= 0 {
		if added {
			in.at = append(in.at, refLine)
		} else {
			in.at[id] = -1 // not unique in the reference
		}
	}
	return id
}

// lineTable is an open-addressing hash set of lines numbering them in
// order of arrival. It beats a map[string]int32 here because a probe reads
// one 16-byte slot and compares the stored hash before touching the line.
type lineTable struct {
	seed  maphash.Seed
	slots []slot // len is a power of two, at most half full
	lines [][]byte
}

type slot struct {
	hash uint64
	id   int32 // symbol + 1; 0 is an empty slot
}

func newLineTable(sizeHint int) lineTable {
	n := 16
	for n < 2*sizeHint {
		n <<= 1
	}
	return lineTable{seed: maphash.MakeSeed(), slots: make([]slot, n), lines: make([][]byte, 0, sizeHint)}
}

func (t *lineTable) intern(line []byte) (id int32, added bool) {
	h := maphash.Bytes(t.seed, line)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.id == 0 {
			id = int32(len(t.lines))
			t.lines = append(t.lines, line)
			*s = slot{hash: h, id: id + 1}
			if 2*len(t.lines) > len(t.slots) {
				t.grow()
			}
			return id, true
		}
		if s.hash == h && bytes.Equal(t.lines[s.id-1], line) {
			return s.id - 1, false
		}
	}
}

func (t *lineTable) grow() {
	old := t.slots
	t.slots = make([]slot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		i := s.hash & mask
		for t.slots[i].id != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}
