package merge

import (
	"bytes"
	"hash/maphash"
)

// text is one file split into lines: line i is buf[start(i):start(i+1)],
// and sym[i] its interned symbol.
//
// The reference text (the base, the first one split) keeps the offset of
// every line in offs, then len(buf). A text split against it shares most
// lines with it, so it keeps only runs: a run of lines found in ref at a
// fixed byte shift, or a run of other lines whose offsets are in its own
// offs. A 1 MB side then costs a few hundred runs instead of 8 bytes a line
// of fresh memory; its offsets are asked for only at the merge's hunks.
type text struct {
	buf  []byte
	sym  []int32
	offs []int
	ref  *text // nil for the reference
	runs []run // runs[0].line is 0; a run lasts until the next one
}

type run struct {
	line int // the run's first line
	from int // the first line's line number in ref, or -1 for an own run
	at   int // ref run: the byte shift from ref; own run: index in offs
}

// n is the number of lines.
func (t *text) n() int { return len(t.sym) }

// start returns the offset of line i; start(n()) is len(buf).
func (t *text) start(i int) int {
	if t.ref == nil {
		return t.offs[i]
	}
	if i == len(t.sym) {
		return len(t.buf)
	}
	// The last run starting at or before line i.
	lo, hi := 0, len(t.runs)
	for hi-lo > 1 {
		if m := int(uint(lo+hi) >> 1); t.runs[m].line <= i {
			lo = m
		} else {
			hi = m
		}
	}
	r := t.runs[lo]
	if r.from < 0 {
		return t.offs[r.at+i-r.line]
	}
	return t.ref.offs[r.from+i-r.line] + r.at
}

// lines returns the bytes of lines [from, from+count).
func (t *text) lines(from, count int) []byte {
	if count <= 0 {
		return nil
	}
	return t.buf[t.start(from):t.start(from+count)]
}

// line returns the bytes of line i.
func (t *text) line(i int) []byte { return t.buf[t.start(i):t.start(i+1)] }

// interner gives every distinct line one symbol, shared by the files of one
// merge so that a line comparison is an int comparison. A line of the first
// file split (the reference, the base) has the number of its first
// occurrence there as its symbol; a line first seen in a later file gets
// the next symbol from ref.n() on. Symbols are below nsym().
type interner struct {
	table lineTable
	ref   *text
	// extra holds the lines of the symbols from ref.n() on.
	extra [][]byte
}

func newInterner() *interner { return &interner{} }

// nsym is the bound of the symbols handed out so far.
func (in *interner) nsym() int { return in.ref.n() + len(in.extra) }

// symLine returns the bytes of symbol id's line.
func (in *interner) symLine(id int32) []byte {
	if n := in.ref.n(); int(id) >= n {
		return in.extra[int(id)-n]
	}
	return in.ref.buf[in.ref.offs[id]:in.ref.offs[id+1]]
}

// split cuts buf into lines and interns them. A final run without LF is a
// line of its own; empty content has no lines.
//
// The first file split is the reference: every line is hashed. A later file
// is walked alongside it: the bytes from the current position on are
// compared with the reference's from its next expected line on, and every
// whole line inside the common stretch takes the reference line's symbol
// without being hashed or even searched for its LF. After a line that
// differs, the walk resumes after the reference line it matches, if that
// line is unique there. Versions of one note share most lines in order, so
// nearly every line is matched a stretch at a time and only changed lines
// are looked up.
func (in *interner) split(buf []byte) *text {
	if in.ref != nil {
		return in.splitNext(buf)
	}
	n := bytes.Count(buf, []byte{'\n'})
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		n++
	}
	t := &text{buf: buf, offs: make([]int, n+1), sym: make([]int32, n)}
	t.offs[n] = len(buf)
	in.ref, in.table = t, newLineTable(n)
	in.splitRef(t)
	return t
}

// splitRef splits and hashes every line, then interns them in a second
// pass: the table probes, nearly all cache misses, then follow each other
// closely enough for the processor to overlap them.
func (in *interner) splitRef(t *text) {
	buf := t.buf
	for i, off := 0, 0; off < len(buf); i++ {
		end := len(buf)
		if k := bytes.IndexByte(buf[off:], '\n'); k >= 0 {
			end = off + k + 1
		}
		t.offs[i] = off
		t.sym[i] = int32(in.table.tag(buf[off:end])) // the tag until interned
		off = end
	}
	offs := t.offs[:len(t.sym)+1]
	for i, tag := range t.sym {
		t.sym[i], _ = in.table.intern(in, uint32(tag), buf[offs[i]:offs[i+1]], int32(i))
	}
}

func (in *interner) splitNext(buf []byte) *text {
	ref := in.ref
	rn := ref.n()
	// Not counted: the reference's line length, with some slack, is a
	// good guess, and append copes with a bad one.
	est := int(int64(rn)*int64(len(buf))/int64(max(len(ref.buf), 1))) + rn/64 + 16
	t := &text{buf: buf, sym: make([]int32, 0, est), ref: ref}
	// Runs and own offsets are sized for a line in two differing: memory
	// reserved but never written costs nothing, while each append that
	// outgrows a slice leaves the old copy behind in a process that never
	// collects (merge-file).
	t.runs, t.offs = make([]run, 0, est/2+16), make([]int, 0, est/2+16)
	// A reference whose last line lacks an LF matches it only at the end.
	refOpenEnd := len(ref.buf) > 0 && ref.buf[len(ref.buf)-1] != '\n'
	cur := 0 // next reference line expected
	for off := 0; off < len(buf); {
		if cur < rn {
			rs := ref.offs[cur]
			lim := rs + CommonPrefix(buf[off:], ref.buf[rs:])
			j := cur
			for j < rn && ref.offs[j+1] <= lim {
				j++
			}
			if j == rn && refOpenEnd && off+len(ref.buf)-rs != len(buf) {
				j--
			}
			if j > cur {
				t.runs = append(t.runs, run{line: len(t.sym), from: cur, at: off - rs})
				t.sym = append(t.sym, ref.sym[cur:j]...)
				off, cur = ref.offs[j]+off-rs, j
				continue
			}
		}
		end := len(buf)
		if k := bytes.IndexByte(buf[off:], '\n'); k >= 0 {
			end = off + k + 1
		}
		id, unique := in.table.intern(in, in.table.tag(buf[off:end]), buf[off:end], -1)
		if int(id) == in.nsym() {
			in.extra = append(in.extra, buf[off:end])
		}
		if n := len(t.runs); n == 0 || t.runs[n-1].from >= 0 {
			t.runs = append(t.runs, run{line: len(t.sym), from: -1, at: len(t.offs)})
		}
		t.offs = append(t.offs, off)
		t.sym = append(t.sym, id)
		if unique {
			cur = int(id) + 1
		}
		off = end
	}
	return t
}

// lineTable is an open-addressing hash set of lines. A slot is 8 bytes, a
// 32-bit hash tag and the symbol, so the table of a 1 MB note stays a few
// hundred KB; the lines themselves are found through the interner. The tag
// also picks the home slot (by multiply-shift, so the size need not be a
// power of two), which lets the table grow without hashing the lines again.
type lineTable struct {
	seed  maphash.Seed
	slots []slot // at most 2/3 full
	used  int
}

// slot holds symbol+1 (so 0 is an empty slot), negated unless the symbol
// is a line that the reference has exactly once.
type slot struct {
	tag uint32
	v   int32
}

func newLineTable(sizeHint int) lineTable {
	slots := make([]slot, max(16, sizeHint+sizeHint/2+1))
	touch(slots)
	return lineTable{seed: maphash.MakeSeed(), slots: slots}
}

// touch writes zeros over s, which make already zeroed. Memory fresh from
// the OS is not written by make, and a table read before it is written
// costs twice: the first read of a page maps the shared zero page, and the
// first write then replaces it, which flushes the TLB of every core the
// process ran on. A short process like merge-file gets all its memory
// fresh. Writing first costs one ordinary page fault per page.
func touch[T any](s []T) { clear(s) }

func (t *lineTable) home(tag uint32) int {
	return int(uint64(tag) * uint64(len(t.slots)) >> 32)
}

// tag is line's hash.
func (t *lineTable) tag(line []byte) uint32 { return uint32(maphash.Bytes(t.seed, line) >> 32) }

// intern returns the symbol of line, whose hash is tag, and whether the
// reference has that line exactly once. Splitting the reference, refLine is
// line's number there; otherwise it is -1, and a new line gets the symbol
// in.nsym(), which the caller must record in in.extra before the next call.
func (t *lineTable) intern(in *interner, tag uint32, line []byte, refLine int32) (id int32, unique bool) {
	for i := t.home(tag); ; {
		s := &t.slots[i]
		if s.v == 0 {
			v := -int32(in.nsym()) - 1
			if refLine >= 0 {
				v = refLine + 1
			}
			*s = slot{tag: tag, v: v}
			if t.used++; 3*t.used > 2*len(t.slots) {
				t.grow()
			}
			return max(v, -v) - 1, v > 0
		}
		if s.tag == tag {
			id = max(s.v, -s.v) - 1
			if bytes.Equal(in.symLine(id), line) {
				unique = s.v > 0
				if refLine >= 0 && unique {
					s.v = -s.v // a second time in the reference
				}
				return id, unique
			}
		}
		if i++; i == len(t.slots) {
			i = 0
		}
	}
}

func (t *lineTable) grow() {
	old := t.slots
	t.slots = make([]slot, 2*len(old))
	touch(t.slots)
	for _, s := range old {
		if s.v == 0 {
			continue
		}
		i := t.home(s.tag)
		for t.slots[i].v != 0 {
			if i++; i == len(t.slots) {
				i = 0
			}
		}
		t.slots[i] = s
	}
}
