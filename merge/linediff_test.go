package merge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLineDiffEqualsWholeDiff checks that setting the common start and end
// aside never changes the diff: on texts made of few distinct lines (blank
// lines, fences, repeats: where the placement of runs moves them) and on
// long notes with a few edits, LineDiff equals the diff of the whole texts.
// A failure names its seed; the case replays from it.
func TestLineDiffEqualsWholeDiff(t *testing.T) {
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 43))
		old, new := lineDiffCase(r)
		got, want := LineDiff(old, new), wholeLineDiff(old, new)
		if bytes := len(old) + len(new); !slices.Equal(got, want) {
			t.Fatalf("seed %d (%d bytes): LineDiff %v, whole diff %v\nold %q\nnew %q", seed, bytes, got, want, old, new)
		}
	}
}

// lineDiffCase returns two versions of a text: one of 0..300 lines from a
// small or a large alphabet, and that text after a few random edits
// (insert, delete or replace runs of lines, or touch the final newline).
func lineDiffCase(r *rand.Rand) (old, new []byte) {
	alphabet := []string{"\n", "a\n", "b\n", "---\n", "```\n", "- x\n"}
	if r.IntN(2) == 0 {
		alphabet = nil
		for i := range 400 {
			alphabet = append(alphabet, fmt.Sprintf("line %d\n", i))
		}
		alphabet = append(alphabet, "\n", "\n", "---\n")
	}
	pick := func() string { return alphabet[r.IntN(len(alphabet))] }
	var lines []string
	for range r.IntN(300) {
		lines = append(lines, pick())
	}
	next := slices.Clone(lines)
	for range 1 + r.IntN(4) {
		at := r.IntN(len(next) + 1)
		n := 1 + r.IntN(4)
		switch r.IntN(3) {
		case 0:
			for range n {
				next = slices.Insert(next, at, pick())
			}
		case 1:
			next = slices.Delete(next, at, min(at+n, len(next)))
		default:
			for i := at; i < min(at+n, len(next)); i++ {
				next[i] = pick()
			}
		}
	}
	join := func(ls []string) []byte {
		var b []byte
		for _, l := range ls {
			b = append(b, l...)
		}
		if len(b) > 0 && r.IntN(5) == 0 {
			b = b[:len(b)-1] // no final newline
		}
		return b
	}
	return join(lines), join(next)
}
