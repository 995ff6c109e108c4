package casefold

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// The key is x/text's full case folding of the NFC form for every rune:
// two binaries that disagreed on a key would disagree on which sibling
// names collide.
func TestFoldEqualsUnicodeFullFolding(t *testing.T) {
	want := cases.Fold()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue // not encodable in UTF-8
		}
		s := string(r)
		if got, w := fold(s), want.String(s); got != w {
			t.Fatalf("fold(%U) = %+q, x/text folds it to %+q", r, got, w)
		}
	}
	if !slices.IsSortedFunc(full[:], func(a, b expansion) int { return int(a.r - b.r) }) {
		t.Fatal("full is not in rune order: expand's binary search would miss entries")
	}
}

// Names mixing scripts, combining marks and expanding runes fold as
// x/text folds them, NFC first.
func TestKeyOfStrings(t *testing.T) {
	for _, name := range []string{
		"README.md", "Straße.md", "STRASSE.md", "ǅemal", "ΣΊΣΥΦΟΣ", "ﬁle", "İstanbul", "ıi",
		"Ꭰꭰ", "e\u0301", "\u00e9", "Å", "Å", "ΐ", "notes/ǰ.txt",
	} {
		if got, want := Key(name), cases.Fold().String(norm.NFC.String(name)); got != want {
			t.Errorf("Key(%q) = %+q, want %+q", name, got, want)
		}
	}
	if Key("Straße.md") != Key("STRASSE.md") || Key("e\u0301") != Key("\u00c9") {
		t.Error("names a case-insensitive file system takes for one do not share a key")
	}
	// Random strings over the runes whose folding is not the identity,
	// with combining marks between them (NFC composes some pairs).
	var pool []rune
	for r := rune(0); r <= 0x1FFFF; r++ {
		if s := string(r); (r < 0xD800 || r > 0xDFFF) && (fold(s) != s || unicode.Is(unicode.Mn, r)) {
			pool = append(pool, r)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2)) // a fixed seed: a failure replays
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.IntN(8); n >= 0; n-- {
			b.WriteRune(pool[rng.IntN(len(pool))])
			if rng.IntN(3) == 0 {
				b.WriteByte("aZ.-"[rng.IntN(4)])
			}
		}
		name := b.String()
		if got, want := Key(name), cases.Fold().String(norm.NFC.String(name)); got != want {
			t.Fatalf("Key(%+q) = %+q, want %+q", name, got, want)
		}
	}
}

func BenchmarkKey(b *testing.B) {
	for b.Loop() {
		Key("Ünïcödé Nötes.md")
	}
}
