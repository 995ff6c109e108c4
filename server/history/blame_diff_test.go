package history

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
)

// TestVersionDiffEqualsLineDiff: the diff blame computes from two
// versions' chunks is merge.LineDiff of their whole texts, for chunked
// files edited at random (seeded): edits inside a chunk, across chunk
// boundaries and in several places at once, lines moved, lines that
// repeat (so that the whole-text diff has choices and runs can slide),
// lines longer than a chunk, CRLF line ends, a last line without LF. The
// versions are diffed newest first, each against the one after it, as a
// walk does; the line counts it keeps must stay those of the held version.
// A failure names its seed and replays from it.
func TestVersionDiffEqualsLineDiff(t *testing.T) {
	fast, whole := 0, 0
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 4343))
			mem := cas.NewMemory()
			var texts [][]byte
			var ids []cas.ID
			lines := chunkedLines(r, 200+r.IntN(600))
			for range 20 {
				text := []byte(strings.Join(lines, ""))
				id, err := cas.WriteFile(mem, text)
				if err != nil {
					t.Fatal(err)
				}
				if len(ids) > 0 && ids[len(ids)-1] == id {
					continue
				}
				texts, ids = append(texts, text), append(ids, id)
				lines = chunkedEdit(r, lines)
			}
			rd := &versionReader{src: mem}
			n := len(ids) - 1
			held, err := rd.read(ids[n])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(held.appendAll(nil), texts[n]) || held.lines() != merge.CountLines(texts[n]) {
				t.Fatalf("version %d reads as other bytes", n)
			}
			d := newVersionDiffer(texts[n])
			for i := n - 1; i >= 0; i-- {
				old, err := rd.read(ids[i])
				if err != nil {
					t.Fatal(err)
				}
				before := d.wholeDiffs
				got := d.diff(old, held)
				want := merge.LineDiff(texts[i], texts[i+1])
				if !slices.Equal(got, want) {
					t.Fatalf("versions %d to %d (whole diff %v): edits %v, want %v", i, i+1, d.wholeDiffs > before, got, want)
				}
				if d.wholeDiffs > before {
					whole++
				} else {
					fast++
				}
				counts := map[uint64]int32{}
				forLines(texts[i], func(l []byte) { counts[maphash.Bytes(d.seed, l)]++ })
				if !mapsEqual(counts, d.counts) {
					t.Fatalf("after versions %d to %d the line counts are not version %d's", i, i+1, i)
				}
				held = old
			}
		})
	}
	t.Logf("%d diffs from chunks, %d whole diffs", fast, whole)
	// Both ways must have been taken, or the test proves less than it says.
	if fast < 50 || whole < 20 {
		t.Errorf("%d diffs from chunks, %d whole diffs: the histories do not exercise both", fast, whole)
	}
}

func mapsEqual(a, b map[uint64]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// chunkedLines returns n lines, most of them unique, some repeating, a
// few longer than a chunk, some ending in CRLF.
func chunkedLines(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = chunkedLine(r)
	}
	return out
}

// chunkedLine is one line; those that should not repeat carry a random
// number, from r so that a seed replays the same lines.
func chunkedLine(r *rand.Rand) string {
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

// chunkedEdit makes one to three edits at random places: runs of lines
// inserted, removed or replaced, a line moved, a line changed in its
// middle (a long one across chunk boundaries), and sometimes the last LF
// removed or added back.
func chunkedEdit(r *rand.Rand, lines []string) []string {
	lines = slices.Clone(lines)
	for range 1 + r.IntN(3) {
		at := r.IntN(len(lines))
		n := 1 + r.IntN(4)
		switch r.IntN(7) {
		case 0:
			for range n {
				lines = slices.Insert(lines, at, chunkedLine(r))
			}
		case 1:
			if len(lines) > 50 {
				lines = slices.Delete(lines, at, min(at+n, len(lines)))
			}
		case 2:
			for i := at; i < min(at+n, len(lines)); i++ {
				lines[i] = chunkedLine(r)
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
