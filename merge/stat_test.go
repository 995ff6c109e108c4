package merge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestCountLines(t *testing.T) {
	for in, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "\n\n": 2, "a\r\nb\r\n": 2} {
		if got := CountLines([]byte(in)); got != want {
			t.Errorf("CountLines(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestStat(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new []byte
		ins, del int
	}{
		{"added file", nil, []byte("a\nb\nc"), 3, 0},
		{"removed file", []byte("a\nb\n"), nil, 0, 2},
		{"empty added file", nil, []byte{}, 0, 0},
		{"unchanged", []byte("a\n"), []byte("a\n"), 0, 0},
		{"one line changed", []byte("a\nb\nc\n"), []byte("a\nB\nc\n"), 1, 1},
		{"appended", []byte("a\n"), []byte("a\nb\nc\n"), 2, 0},
		{"final newline added", []byte("a\nb"), []byte("a\nb\n"), 1, 1},
		{"line ending changed", []byte("a\r\nb\n"), []byte("a\nb\n"), 1, 1},
		{"moved line", []byte("a\nb\nc\n"), []byte("b\nc\na\n"), 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ins, del := Stat(tc.old, tc.new)
			if ins != tc.ins || del != tc.del {
				t.Errorf("Stat = +%d -%d, want +%d -%d", ins, del, tc.ins, tc.del)
			}
		})
	}
}

// Trimming the lines two versions share at both ends changes no count:
// on generated notes (each pair of a case's three versions), and on texts
// of a few short lines, many repeated, with and without a final LF and
// with CRLF, where the edges of the shared runs fall anywhere in a line.
func TestStatTrimsWithoutChangingCounts(t *testing.T) {
	check := func(what string, a, b []byte) {
		t.Helper()
		if len(a) == 0 || len(b) == 0 || bytes.Equal(a, b) {
			return // Stat answers these before it diffs
		}
		ins, del := Stat(a, b)
		wi, wd := lineStat(a, b)
		if ins != wi || del != wd {
			t.Fatalf("%s: Stat(%q, %q) = +%d -%d, the whole diff says +%d -%d", what, a, b, ins, del, wi, wd)
		}
	}
	g := newNoteGen(7)
	for i := range 500 {
		c := g.next(i)
		check(c.name, c.base, c.local)
		check(c.name, c.local, c.remote)
		check(c.name, c.remote, c.base)
	}
	r := rand.New(rand.NewPCG(42, 7))
	pieces := []string{"a", "b", "ab", "ba", "", "a\r"}
	text := func() []byte {
		var sb strings.Builder
		for n := r.IntN(7); n > 0; n-- {
			sb.WriteString(pieces[r.IntN(len(pieces))])
			if n > 1 || r.IntN(3) > 0 {
				sb.WriteByte('\n')
			}
		}
		return []byte(sb.String())
	}
	for i := range 20000 {
		a := text()
		b := text()
		if r.IntN(2) == 0 { // an edit of a: a prefix, something, a suffix
			x, y := r.IntN(len(a)+1), r.IntN(len(a)+1)
			b = slices.Concat(a[:min(x, y)], text(), a[max(x, y):])
		}
		check(fmt.Sprintf("pair %d", i), a, b)
	}
}

// BenchmarkStatAppend is the diffstat of a commit that appends 1 KiB to
// a 256 KiB note (a log everyone appends to), against lineStat, the
// same count without the trim, in the same run.
func BenchmarkStatAppend(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 256<<10; i++ {
		fmt.Fprintf(&sb, "- %d: an entry of the shared log, as agents append them\n", i)
	}
	old := []byte(sb.String())
	for sb.Len() < len(old)+1<<10 {
		sb.WriteString("- appended: one more line of the commit's kilobyte\n")
	}
	new := []byte(sb.String())
	b.Run("trimmed", func(b *testing.B) {
		for b.Loop() {
			Stat(old, new)
		}
	})
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			lineStat(old, new)
		}
	})
}
