package merge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveLines splits b into lines the obvious way: runs ending in LF, the
// last one possibly without.
func naiveLines(b []byte) [][]byte {
	var ls [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b)
		}
		ls, b = append(ls, b[:i]), b[i:]
	}
	return ls
}

// versions returns a base of n lines drawn from few distinct ones (so
// lines repeat, and the walk of a side against base loses its place) and
// two edited copies; any of the three may lack its final LF.
func versions(r *rand.Rand, n int) [3][]byte {
	pool := []string{"", "a", "b", "}", "a\r", "x y"}
	line := func() string {
		if r.IntN(3) == 0 {
			return pool[r.IntN(len(pool))]
		}
		return fmt.Sprint("line ", r.IntN(2*n+1))
	}
	base := make([]string, n)
	for i := range base {
		base[i] = line()
	}
	edit := func() []string {
		var out []string
		for _, l := range base {
			switch r.IntN(12) {
			case 0: // deleted
			case 1:
				out = append(out, line(), l)
			case 2:
				out = append(out, line())
			default:
				out = append(out, l)
			}
		}
		return out
	}
	var v [3][]byte
	for i, ls := range [][]string{base, edit(), edit()} {
		s := strings.Join(ls, "\n")
		if len(ls) > 0 && r.IntN(4) > 0 {
			s += "\n"
		}
		v[i] = []byte(s)
	}
	return v
}

// The merge compares lines only through their symbols and writes them
// through their offsets: every line of every version must come back with
// its exact bytes, and two lines must share a symbol exactly when their
// bytes are equal, however a side was found (by the stretch it shares with
// base, or line by line after an edit).
func TestSplitKeepsLinesAndSymbols(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for c := range 400 {
		v := versions(r, r.IntN(300))
		if c%4 == 0 { // realistic notes too
			nc := newNoteGen(uint64(c)).next(c)
			v = [3][]byte{nc.base, nc.local, nc.remote}
		}
		in := newInterner()
		symOf := map[string]int32{}
		lineOf := map[int32]string{}
		for k, buf := range v {
			txt := in.split(buf)
			want := naiveLines(buf)
			if txt.n() != len(want) {
				t.Fatalf("case %d version %d: %d lines, want %d", c, k, txt.n(), len(want))
			}
			for i, w := range want {
				if got := txt.line(i); !bytes.Equal(got, w) {
					t.Fatalf("case %d version %d line %d: %q, want %q", c, k, i, got, w)
				}
				s := txt.sym[i]
				if int(s) >= in.nsym() {
					t.Fatalf("case %d version %d line %d: symbol %d not below %d", c, k, i, s, in.nsym())
				}
				if prev, ok := symOf[string(w)]; ok && prev != s {
					t.Fatalf("case %d version %d line %d %q: symbol %d, earlier %d", c, k, i, w, s, prev)
				}
				if prev, ok := lineOf[s]; ok && prev != string(w) {
					t.Fatalf("case %d: symbol %d is both %q and %q", c, s, prev, w)
				}
				symOf[string(w)], lineOf[s] = s, string(w)
			}
			if n := txt.n(); n > 0 {
				from := r.IntN(n)
				count := r.IntN(n - from + 1)
				if got, want := txt.lines(from, count), bytes.Join(want[from:from+count], nil); !bytes.Equal(got, want) {
					t.Fatalf("case %d version %d lines(%d, %d) = %q, want %q", c, k, from, count, got, want)
				}
			}
		}
	}
}
