package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules for the two free-form inputs of the operations, in one place
// for the engine, the MCP adapter and the CLI (spec/mcp-tools.md, Inputs).

// ErrNoHome is returned by ExpandHome when the path starts with ~ but the
// home directory is unknown. (Its text is the one the CLI has always
// printed, prefix included.)
var ErrNoHome = errors.New("server: the home directory is unknown")

// ExpandHome replaces a leading "~" ("~" alone, "~/..." or "~" followed by
// the OS path separator) with the current user's home directory; any other
// path is returned as it is. The result is not cleaned or made absolute.
func ExpandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", ErrNoHome
	}
	return filepath.Join(home, p[1:]), nil
}

// MaxMessageBytes bounds a commit message (spec: notes_commit.message).
const MaxMessageBytes = 16384

// MessageFault is what is wrong with a commit message.
type MessageFault int

// The faults CheckMessageText finds, in the order it looks for them.
const (
	MessageOK      MessageFault = iota
	MessageNUL                  // holds U+0000
	MessageTooLong              // more than MaxMessageBytes bytes
	MessageNotUTF8              // not valid UTF-8
	MessageBlank                // empty or only white space
)

// CheckMessageText returns the first fault of m, or MessageOK.
func CheckMessageText(m string) MessageFault {
	switch {
	case strings.ContainsRune(m, 0):
		return MessageNUL
	case len(m) > MaxMessageBytes:
		return MessageTooLong
	case !utf8.ValidString(m):
		return MessageNotUTF8
	case strings.TrimFunc(m, unicode.IsSpace) == "":
		return MessageBlank
	}
	return MessageOK
}
