package merge

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Every clean result of Text is made of input lines, and no line is
// doubled by the merge: a line occurs in the result at most as often as in
// base plus what each side added of it, and where both sides added lines
// at one place (checked in TestTextSharedAdditionsOnce), the lines both
// wrote are written once.
func TestTextCleanResultTracesToInputs(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	g := newNoteGen(39)
	for i := range n {
		c := g.next(i)
		got := Text(c.base, c.local, c.remote)
		if len(got.Conflicts) != 0 {
			continue
		}
		b, l, r := lineCounts(c.base), lineCounts(c.local), lineCounts(c.remote)
		for line, k := range lineCounts(got.Content) {
			if b[line]+l[line]+r[line] == 0 {
				t.Fatalf("%s: result line %q is in no input", c.name, line)
			}
			if most := b[line] + max(l[line]-b[line], 0) + max(r[line]-b[line], 0); k > most {
				t.Fatalf("%s: line %q %d times in the result, base %d, local %d, remote %d",
					c.name, line, k, b[line], l[line], r[line])
			}
		}
		if !untouchedInOrder(c.base, c.local, c.remote, got.Content) {
			t.Fatalf("%s: base lines neither side changed are not all in the result in order", c.name)
		}
	}
}

// lineCounts counts b's lines by content, line end left out: a last line
// without LF gets one when lines follow it in a merge.
func lineCounts(b []byte) map[string]int {
	m := map[string]int{}
	for _, l := range splitAll(b) {
		m[string(bytes.TrimRight(l, "\r\n"))]++
	}
	return m
}

// Both sides insert at one place of a note (or both create the file) a
// block that starts with the same lines and ends with the same lines. The
// merge is clean; the shared lines are in it once, everything else each
// side added is there, and remote's own lines come before local's.
func TestTextSharedAdditionsOnce(t *testing.T) {
	g := newNoteGen(7039)
	tried := 0
	for i := range 2000 {
		var base []string
		if i%5 != 0 {
			base = g.doc(2 + g.r.IntN(6))
		}
		at := g.r.IntN(len(base) + 1)
		blk := g.block()
		pre := blk[:min(len(blk), 1+g.r.IntN(2))]
		var suf []string
		if g.r.IntN(2) == 0 {
			suf = g.block()
		}
		a, b := g.block(), g.block()
		ins := func(own []string) []string { return slices.Concat(pre, own, suf) }
		la, lb := ins(a), ins(b)
		// The case is the one wanted only if the shared lines are
		// exactly pre and suf, and neither neighbour of the place is
		// an inserted line (a run equal to its neighbour may slide).
		if a[0] == b[0] || a[len(a)-1] == b[len(b)-1] || slices.Equal(a, b) ||
			at > 0 && (slices.Contains(la, base[at-1]) || slices.Contains(lb, base[at-1])) ||
			at < len(base) && (slices.Contains(la, base[at]) || slices.Contains(lb, base[at])) {
			continue
		}
		tried++
		join := func(l []string) []byte {
			if len(l) == 0 {
				return nil
			}
			return []byte(strings.Join(l, "\n") + "\n")
		}
		local := join(insert(base, at, la...))
		remote := join(insert(base, at, lb...))
		got := Text(join(base), local, remote)
		name := fmt.Sprintf("case %d", i)
		if len(got.Conflicts) != 0 {
			t.Fatalf("%s: conflicts %v:\n%s", name, got.Conflicts, got.Content)
		}
		var middle []string
		switch {
		case holdsLines(b, a):
			middle = b
		case holdsLines(a, b):
			middle = a
		default:
			middle = slices.Concat(b, a)
		}
		want := join(insert(base, at, slices.Concat(pre, middle, suf)...))
		if !bytes.Equal(got.Content, want) {
			t.Fatalf("%s: got\n%s\nwant\n%s", name, got.Content, want)
		}
	}
	if tried < 500 {
		t.Fatalf("only %d cases of the wanted shape", tried)
	}
}

// holdsLines reports whether part is a contiguous run of all.
func holdsLines(all, part []string) bool {
	for i := 0; i+len(part) <= len(all); i++ {
		if slices.Equal(all[i:i+len(part)], part) {
			return true
		}
	}
	return false
}
