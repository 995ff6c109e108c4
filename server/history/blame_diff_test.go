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
	"github.com/slivingdoc/slivingdoc/server/history/historytest"
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
			mem := cas.NewObjectSet()
			var texts [][]byte
			var ids []cas.ID
			lines := historytest.ChunkedLines(r, 200+r.IntN(600))
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
				lines = historytest.ChunkedEdit(r, lines)
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
