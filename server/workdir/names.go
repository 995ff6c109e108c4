package workdir

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/slivingdoc/slivingdoc/internal/casefold"
)

// Content rules for names and paths (DESIGN §6). They are the portable
// subset every host of the notebook can create: a name valid here can be
// written on Linux, macOS and Windows, and two valid siblings never map to
// the same file on a case-insensitive file system.

const (
	maxSegmentBytes = 255
	MaxPathBytes    = 4096 // a whole notebook-relative path
)

// The reasons a file of L is refused (Refused.Reason in server, which
// re-exports them under the same names).
const (
	FileInvalidUTF8   = "INVALID_UTF8"
	FileNulByte       = "NUL_BYTE"
	FileSymlink       = "SYMLINK"
	FileSpecial       = "SPECIAL_FILE"
	FileInvalidName   = "INVALID_NAME"
	FileNameCollision = "NAME_COLLISION"
	FilePathTooLong   = "PATH_TOO_LONG"
)

// nameReason returns FileInvalidName when one path segment breaks the
// rules, else "".
func nameReason(name string) string {
	if len(name) == 0 || len(name) > maxSegmentBytes || !utf8.ValidString(name) {
		return FileInvalidName
	}
	if name == "." || name == ".." || strings.EqualFold(name, ".git") {
		return FileInvalidName
	}
	ascii := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= utf8.RuneSelf {
			ascii = false
			continue
		}
		if c < 0x20 || c == 0x7f || forbiddenASCII[c] {
			return FileInvalidName
		}
	}
	if !ascii { // ASCII is always NFC and has no other control characters
		if !norm.NFC.IsNormalString(name) {
			return FileInvalidName
		}
		for _, r := range name {
			if unicode.IsControl(r) {
				return FileInvalidName
			}
		}
	}
	if last := name[len(name)-1]; last == ' ' || last == '.' {
		return FileInvalidName
	}
	if isDeviceName(name) {
		return FileInvalidName
	}
	return ""
}

// forbiddenASCII marks the ASCII characters Windows forbids in a name:
// / \ : * ? " < > | (written out, so that it is static data).
var forbiddenASCII = [utf8.RuneSelf]bool{'/': true, '\\': true, ':': true, '*': true, '?': true, '"': true, '<': true, '>': true, '|': true}

// isDeviceName reports Windows reserved device names, which Windows
// resolves whatever the extension ("con.txt" is the console).
func isDeviceName(name string) bool {
	stem := name
	if i := strings.IndexByte(stem, '.'); i >= 0 {
		stem = stem[:i]
	}
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch stem {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(stem) >= 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) {
		switch stem[3:] {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return true
		}
	}
	return false
}

// collisions returns the names among siblings that share a fold key with
// another sibling.
//
// A name of ASCII without capitals is its own fold key, and siblings'
// names differ, so two such names never collide: only the names that fold
// to something else are keyed, and the others are looked up among them.
// Most directories have no such name, and then nothing is allocated.
func collisions(names []string) map[string]bool {
	if len(names) < 2 {
		return nil
	}
	var first map[string]string // fold key → the first name with it, of the names that fold
	var out map[string]bool
	for _, n := range names {
		if !folds(n) {
			continue
		}
		if first == nil {
			first = map[string]string{}
		}
		k := casefold.Key(n)
		if other, ok := first[k]; ok {
			if out == nil {
				out = map[string]bool{}
			}
			out[other], out[n] = true, true
			continue
		}
		first[k] = n
	}
	if first == nil {
		return nil
	}
	for _, n := range names {
		if folds(n) {
			continue
		}
		if other, ok := first[n]; ok {
			if out == nil {
				out = map[string]bool{}
			}
			out[other], out[n] = true, true
		}
	}
	return out
}

// folds reports whether name's fold key may differ from name: it holds a
// capital or a byte outside ASCII.
func folds(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}
