// Package casefold folds names as case-insensitive file systems compare
// them: Unicode's full case folding (CaseFolding.txt's common and full
// mappings, without the Turkic ones) of the name's NFC form. Two sibling
// names whose keys are equal would be one file on such a file system, so
// the engine (server/workdir) and the publication protocol (publish) refuse
// or rename them by this key, and both must compute it alike forever.
//
// It is golang.org/x/text/cases.Fold's result, rune for rune
// (casefold_test.go checks every rune and random strings against it), built
// on the standard library's case tables plus the table of multi-rune
// foldings in full_table.go: importing x/text/cases would make every
// process of ours, whatever its command, pay the package initialisation of
// its language tables.
package casefold

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Key returns the fold key of name: its NFC form, case-folded.
func Key(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return fold(norm.NFC.String(name))
		}
	}
	return strings.ToLower(name) // ASCII: folding is lower-casing
}

// fold is the full case folding of s.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if e, ok := expand(r); ok {
			b.WriteString(e)
			continue
		}
		b.WriteRune(Rune(r))
	}
	return b.String()
}

// Rune is the simple (one-rune) folding of r. For almost every rune it is
// the lower case of its upper case; the exceptions are the dotless i,
// which folds to itself (only the Turkic mappings fold it), and the
// Cherokee small letters, which fold to their capitals (Cherokee was
// encoded capitals first).
func Rune(r rune) rune {
	switch {
	case r == 'ı':
		return r
	case r >= 0x13F8 && r <= 0x13FD, r >= 0xAB70 && r <= 0xABBF:
		return unicode.ToUpper(r)
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// expansion is one multi-rune folding.
type expansion struct {
	r  rune
	to string
}

// expand returns r's multi-rune folding, if it has one.
func expand(r rune) (string, bool) {
	if r < full[0].r {
		return "", false
	}
	i := sort.Search(len(full), func(i int) bool { return full[i].r >= r })
	if i < len(full) && full[i].r == r {
		return full[i].to, true
	}
	return "", false
}
