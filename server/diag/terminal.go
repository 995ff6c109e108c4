package diag

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TerminalSafe escapes what would let text written by someone else (a file
// name, a message) drive or deceive a terminal: control characters other
// than tab (\x1b...), bidirectional controls such as U+202E that reorder
// what is displayed, line and paragraph separators, and bytes that are not
// UTF-8 (shown as \xNN rather than passed through raw).
func TerminalSafe(s string) string {
	if safeAlready(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func safeAlready(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			return false
		}
		i += n
	}
	return true
}

func unsafeRune(r rune) bool {
	if r == '\t' {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}
