package merge

import (
	"bytes"
	"strconv"
)

// DefaultContext is the unchanged lines a unified diff shows around each
// change, as git and diff -u do.
const DefaultContext = 3

// Op marks one line of a unified hunk.
type Op byte

const (
	OpContext Op = ' '
	OpDelete  Op = '-'
	OpInsert  Op = '+'
)

// DiffLine is one line of a hunk: its op and its bytes, line ending
// included (a CR before the LF stays; the last line of a file may lack
// the LF, which NoEOL reports).
type DiffLine struct {
	Op    Op
	Text  []byte
	NoEOL bool
}

// Hunk is one "@@ -OldStart,OldLines +NewStart,NewLines @@" block. Starts
// are one-based; a side with no lines names the line before the hunk (0
// at the top of the file), as unified diffs do.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Lines              []DiffLine
}

// Header is the hunk's "@@ ... @@" line without its newline. A count of one
// is left out, as git and diff -u do.
func (h Hunk) Header() string {
	return "@@ -" + rangeText(h.OldStart, h.OldLines) + " +" + rangeText(h.NewStart, h.NewLines) + " @@"
}

func rangeText(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

// Unified returns the hunks that turn old into new, with context unchanged
// lines around each change (negative: DefaultContext). Lines follow the
// merge's rule (a final run without LF is a line; nothing is normalised),
// and the line diff is the one the merge uses (diff.go), so the hunks are
// nearly always those of `git diff --no-indent-heuristic` (unified_test.go
// measures how often). Changes whose context would touch or overlap
// share one hunk. Equal inputs give no hunk.
func Unified(old, new []byte, context int) []Hunk {
	if context < 0 {
		context = DefaultContext
	}
	if bytes.Equal(old, new) {
		return nil
	}
	in := newInterner()
	a, b := in.split(old), in.split(new)
	changes := newDiffer(in.nsym()).lineDiff(a.sym, b.sym)
	var out []Hunk
	for i := 0; i < len(changes); {
		// Group the changes whose gaps are at most two contexts.
		j := i
		for j+1 < len(changes) && changes[j+1].old.lo-changes[j].old.hi <= 2*context {
			j++
		}
		first, last := changes[i], changes[j]
		lo1 := max(first.old.lo-context, 0)
		lo2 := first.new.lo - (first.old.lo - lo1)
		hi1 := min(last.old.hi+context, a.n())
		hi2 := last.new.hi + (hi1 - last.old.hi)
		h := Hunk{OldLines: hi1 - lo1, NewLines: hi2 - lo2}
		h.OldStart, h.NewStart = lo1+1, lo2+1
		if h.OldLines == 0 {
			h.OldStart = lo1
		}
		if h.NewLines == 0 {
			h.NewStart = lo2
		}
		p1 := lo1
		for _, c := range changes[i : j+1] {
			for ; p1 < c.old.lo; p1++ {
				h.Lines = append(h.Lines, lineOf(OpContext, a, p1))
			}
			for k := c.old.lo; k < c.old.hi; k++ {
				h.Lines = append(h.Lines, lineOf(OpDelete, a, k))
			}
			for k := c.new.lo; k < c.new.hi; k++ {
				h.Lines = append(h.Lines, lineOf(OpInsert, b, k))
			}
			p1 = c.old.hi
		}
		for ; p1 < hi1; p1++ {
			h.Lines = append(h.Lines, lineOf(OpContext, a, p1))
		}
		out = append(out, h)
		i = j + 1
	}
	return out
}

func lineOf(op Op, t *text, i int) DiffLine {
	l := t.line(i)
	return DiffLine{Op: op, Text: l, NoEOL: len(l) == 0 || l[len(l)-1] != '\n'}
}

// AppendHunks appends the hunks in unified form: each header, then each
// line with its op, and "\ No newline at end of file" after a line without
// LF, as git writes it.
func AppendHunks(dst []byte, hunks []Hunk) []byte {
	for _, h := range hunks {
		dst = append(dst, h.Header()...)
		dst = append(dst, '\n')
		for _, l := range h.Lines {
			dst = append(dst, byte(l.Op))
			dst = append(dst, l.Text...)
			if l.NoEOL {
				dst = append(dst, "\n"+NoNewline+"\n"...)
			}
		}
	}
	return dst
}

// NoNewline is the marker line after a hunk line that has no LF.
const NoNewline = `\ No newline at end of file`
