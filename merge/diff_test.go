package merge

import (
	"math/rand/v2"
	"testing"
)

// diff diffs a and b with a differ of their own.
func diff(a, b []int32) []change {
	top := int32(-1)
	for _, s := range append(append([]int32(nil), a...), b...) {
		top = max(top, s)
	}
	return newDiffer(int(top)+1).lineDiff(a, b)
}

// checkDiff asserts that cs is a valid diff of a into b: changes in order,
// non-empty, separated by unchanged lines, and applying them to a gives b.
func checkDiff(t *testing.T, a, b []int32, cs []change) {
	t.Helper()
	var out []int32
	i := 0
	for k, c := range cs {
		if c.old.lo < i || (k > 0 && c.old.lo == i) || c.old.len()+c.new.len() == 0 || c.old.len() < 0 || c.new.len() < 0 {
			t.Fatalf("change %d %+v out of order or empty (previous end %d)", k, c, i)
		}
		if c.new.lo-len(out) != c.old.lo-i {
			t.Fatalf("change %d %+v: new position %d, want %d", k, c, len(out)+c.old.lo-i, c.new.lo)
		}
		out = append(out, a[i:c.old.lo]...)
		out = append(out, b[c.new.lo:c.new.hi]...)
		i = c.old.hi
	}
	out = append(out, a[i:]...)
	if len(out) != len(b) {
		t.Fatalf("applied diff has %d lines, want %d", len(out), len(b))
	}
	for k := range out {
		if out[k] != b[k] {
			t.Fatalf("applied diff differs from b at line %d", k)
		}
	}
}

func randomSyms(r *rand.Rand, n, alphabet int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(r.IntN(alphabet))
	}
	return s
}

// mutate copies a with random deletions, insertions and changes.
func mutate(r *rand.Rand, a []int32, rate float64, alphabet int) []int32 {
	var b []int32
	for _, s := range a {
		switch x := r.Float64(); {
		case x < rate/3: // deleted
		case x < 2*rate/3:
			b = append(b, int32(r.IntN(alphabet)), s)
		case x < rate:
			b = append(b, int32(r.IntN(alphabet)))
		default:
			b = append(b, s)
		}
	}
	return b
}

func TestDiffIsValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		alphabet := 2 + r.IntN(40)
		a := randomSyms(r, r.IntN(60), alphabet)
		b := mutate(r, a, r.Float64(), alphabet)
		checkDiff(t, a, b, diff(a, b))
	}
}

// Large, very different inputs stay valid diffs.
func TestDiffLargeRewritesStayValid(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ n, alphabet int }{{6000, 8}, {6000, 5000}, {20000, 200}} {
		a := randomSyms(r, tc.n, tc.alphabet)
		checkDiff(t, a, nil, diff(a, nil))
		b := mutate(r, a, 0.3, tc.alphabet)
		checkDiff(t, a, b, diff(a, b))
		c := randomSyms(r, tc.n, tc.alphabet)
		checkDiff(t, a, c, diff(a, c))
	}
	// A common block after about 300 edits' worth of different lines.
	common := randomSyms(r, 100, 1000)
	a := append(append(randomSyms(r, 150, 1000), common...), randomSyms(r, 35000, 1000)...)
	b := append(append(randomSyms(r, 150, 1000), common...), randomSyms(r, 35000, 1000)...)
	checkDiff(t, a, b, diff(a, b))
}

// A diff of versions that share most lines is minimal: one changed line
// costs one deletion and one insertion.
func TestDiffSmallEditsAreMinimal(t *testing.T) {
	a := make([]int32, 1000)
	for i := range a {
		a[i] = int32(i)
	}
	b := append([]int32(nil), a...)
	b[10], b[500] = 5000, 5001
	b = append(b[:700], append([]int32{6000}, b[700:]...)...)
	hs := diff(a, b)
	checkDiff(t, a, b, hs)
	del, ins := 0, 0
	for _, c := range hs {
		del += c.old.len()
		ins += c.new.len()
	}
	if del != 2 || ins != 3 {
		t.Fatalf("-%d +%d, want -2 +3: %+v", del, ins, hs)
	}
}

// A long note with scattered edits is cut at its unique lines before
// go-diff sees it (split.go); the diff is the one go-diff makes of the
// whole.
func TestDiffCutAtUniqueLinesIsGoDiffs(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 5 {
		a := make([]int32, 5000)
		for i := range a {
			a[i] = int32(i)
			if r.IntN(6) == 0 {
				a[i] = 5000 // a blank line, many times
			}
		}
		b := append([]int32(nil), a...)
		for range 50 {
			switch k := r.IntN(len(b)); r.IntN(3) {
			case 0:
				b[k] = int32(6000 + r.IntN(1000))
			case 1:
				b = append(b[:k], append([]int32{5000, int32(7000 + r.IntN(1000))}, b[k:]...)...)
			default:
				b = append(b[:k], b[k+1:]...)
			}
		}
		got := diff(a, b)
		checkDiff(t, a, b, got)
		// The same without the cut: go-diff on the whole, then placed.
		d := newDiffer(8000)
		ca, cb := make([]bool, len(a)), make([]bool, len(b))
		if !d.runes(a, b, ca, cb) {
			t.Fatal("runes")
		}
		d.goDiff(d.ra, d.rb, d.ka, d.kb, ca, cb)
		d.slide(a, ca, cb)
		d.slide(b, cb, ca)
		want := collect(ca, cb, nil)
		if len(got) != len(want) {
			t.Fatalf("%d changes cut at unique lines, %d without", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("change %d: %+v cut at unique lines, %+v without", i, got[i], want[i])
			}
		}
	}
}
