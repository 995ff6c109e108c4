// Package historytest makes the texts and edits blame's tests replay:
// lines of many chunks (some longer than a chunk, some repeating, some
// ending in CRLF) and random edits of them, all from a seeded source so
// that a failure replays. Tests of server/history and of the engine's
// blame share them.
package historytest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// ChunkedLines returns n lines, most of them unique, some repeating, a
// few longer than a chunk, some ending in CRLF.
func ChunkedLines(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ChunkedLine(r)
	}
	return out
}

// ChunkedLine is one line; those that should not repeat carry a random
// number, from r so that a seed replays the same lines.
func ChunkedLine(r *rand.Rand) string {
	serial := r.Uint32()
	switch k := r.IntN(100); {
	case k < 8:
		return []string{"\n", "---\n", "- item\n", "# heading\n", "\r\n"}[r.IntN(5)]
	case k < 10:
		// Longer than most chunks, and sometimes than the largest.
		return strings.Repeat(fmt.Sprintf("long %d ", serial), 800+r.IntN(7000)) + "\n"
	case k < 20:
		return fmt.Sprintf("a line with CRLF %d, %s\r\n", serial, strings.Repeat("x", r.IntN(80)))
	default:
		return fmt.Sprintf("line %d of the notes: %s\n", serial, strings.Repeat("words ", r.IntN(15)))
	}
}

// ChunkedEdit makes one to three edits at random places: runs of lines
// inserted, removed or replaced, a line moved, a line changed in its
// middle (a long one across chunk boundaries), and sometimes the last LF
// removed or added back.
func ChunkedEdit(r *rand.Rand, lines []string) []string {
	lines = slices.Clone(lines)
	for range 1 + r.IntN(3) {
		at := r.IntN(len(lines))
		n := 1 + r.IntN(4)
		switch r.IntN(7) {
		case 0:
			for range n {
				lines = slices.Insert(lines, at, ChunkedLine(r))
			}
		case 1:
			if len(lines) > 50 {
				lines = slices.Delete(lines, at, min(at+n, len(lines)))
			}
		case 2:
			for i := at; i < min(at+n, len(lines)); i++ {
				lines[i] = ChunkedLine(r)
			}
		case 3:
			l := lines[at]
			lines = slices.Delete(lines, at, at+1)
			lines = slices.Insert(lines, r.IntN(len(lines)+1), l)
		case 4:
			l := lines[at]
			k := r.IntN(len(l))
			lines[at] = l[:k] + "edited " + l[k:]
		case 5:
			last := &lines[len(lines)-1]
			if t, ok := strings.CutSuffix(*last, "\n"); ok && t != "" {
				*last = t
			} else {
				*last += "\n"
			}
		default:
			// A repeated line next to its twin: a run that can slide.
			lines = slices.Insert(lines, at, lines[at])
		}
	}
	// A last line without LF must stay last.
	for i, l := range lines[:len(lines)-1] {
		if !strings.HasSuffix(l, "\n") {
			lines[i] = l + "\n"
		}
	}
	return lines
}
