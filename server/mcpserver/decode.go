package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// Byte bound of the path input (spec/mcp-tools.md, Inputs); the message's
// rules are in rules.CheckMessageText. Both are checked here, not in the
// schema: JSON Schema maxLength counts code points.
const maxPathBytes = 4096

// maxComponentBytes bounds each '/'-separated component of path, as the
// notebook's content rules bound a name segment (and as NAME_MAX does on
// the common file systems).
const maxComponentBytes = 255

// args is one decoded tool input.
type args struct {
	path       string // "" = the server's notebook directory; otherwise absolute, ~/ expanded
	message    string
	hasMessage bool
}

// decodeArgs decodes raw tool arguments strictly: a JSON object whose only
// members are the tool's fields, each at most once, each a string. Absent
// or null arguments are the empty object. Every failure is INVALID_REQUEST.
func decodeArgs(raw json.RawMessage, tool string) (args, *diag.Error) {
	var a args
	withMessage := tool == ToolCommit
	// Absent and null arguments both mean "no arguments": some clients
	// send a nil map as null. Null as a field value is refused below.
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return a, a.validate(tool)
	}
	if !utf8.Valid(raw) {
		return a, invalidArgument("%s: the arguments are not valid UTF-8.", tool)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return a, invalidArgument("%s: the arguments must be a JSON object.", tool)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return a, invalidArgument("%s: the arguments are not valid JSON.", tool)
		}
		name, _ := tok.(string) // object keys are always strings
		known := name == "path" || (withMessage && name == "message")
		if !known {
			return a, invalidArgument("%s: unknown field %s; the tool accepts %s.", tool, shortQuote(name), accepted(tool))
		}
		if seen[name] {
			return a, invalidArgument("%s: field %q appears more than once.", tool, name)
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return a, invalidArgument("%s: the arguments are not valid JSON.", tool)
		}
		// Go decodes a lone UTF-16 surrogate escape to U+FFFD: the text
		// would be stored changed, so it is refused instead.
		if loneSurrogate(raw) {
			return a, invalidArgument("%s: field %q holds a lone UTF-16 surrogate (\\uD800-\\uDFFF without its pair); it is not text.", tool, name)
		}
		var value any
		if err := json.Unmarshal(raw, &value); err != nil {
			return a, invalidArgument("%s: the arguments are not valid JSON.", tool)
		}
		s, ok := value.(string)
		switch {
		case value == nil:
			return a, invalidArgument("%s: field %q is null; omit it instead.", tool, name)
		case !ok:
			return a, invalidArgument("%s: field %q must be a string.", tool, name)
		}
		if name == "path" {
			a.path = s
		} else {
			a.message, a.hasMessage = s, true
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return a, invalidArgument("%s: the arguments are not valid JSON.", tool)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return a, invalidArgument("%s: the arguments must be a single JSON object.", tool)
	}
	return a, a.validate(tool)
}

// validate applies the field rules and resolves ~/ in path.
func (a *args) validate(tool string) *diag.Error {
	if a.path != "" {
		if strings.ContainsRune(a.path, 0) {
			return invalidArgument("%s: path contains U+0000.", tool)
		}
		if strings.HasPrefix(a.path, "~/") { // the spec's form; a bare "~" is not absolute
			p, err := rules.ExpandHome(a.path)
			if err != nil {
				return invalidArgument("%s: path begins with ~/ but the server has no home directory.", tool)
			}
			a.path = p
		}
		if len(a.path) > maxPathBytes {
			return invalidArgument("%s: path is %d bytes; the limit is 4,096.", tool, len(a.path))
		}
		if !filepath.IsAbs(a.path) {
			return invalidArgument("%s: path must be absolute (or begin with ~/); omit it for the server's notebook directory.", tool)
		}
		// A component no file system can hold is the caller's input, not a
		// local failure to retry: the OS would answer ENAMETOOLONG, which
		// the engine reports as ENGINE_FAILED/LOCAL_IO, retryable.
		for _, c := range strings.Split(a.path, "/") {
			if len(c) > maxComponentBytes {
				return invalidArgument("%s: a path component is %d bytes; the limit is 255.", tool, len(c))
			}
		}
	}
	if tool != ToolCommit {
		return nil
	}
	if !a.hasMessage {
		return invalidArgument("notes_commit: message is required.")
	}
	switch rules.CheckMessageText(a.message) {
	case rules.MessageNUL:
		return invalidArgument("notes_commit: message contains U+0000.")
	case rules.MessageTooLong:
		return invalidArgument("notes_commit: message is %d bytes; the limit is 16,384.", len(a.message))
	case rules.MessageBlank:
		return requestError(diag.ReasonBlankMessage, "notes_commit: message is blank; describe the change.")
	}
	return nil // MessageNotUTF8 cannot come out of JSON; the engine refuses it anyway
}

// loneSurrogate reports whether a JSON value holds a \u escape of a
// surrogate that is not a high surrogate followed by a low one.
func loneSurrogate(raw []byte) bool {
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 4 {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[:4]), 16, 32)
		return rune(v), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // a two-byte escape such as \\ or \"
			continue
		}
		r, ok := hex4(raw[i+2:])
		if !ok {
			continue
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true // a low surrogate with no high one before it
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if lo, ok := hex4(raw[i+8:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11
					continue
				}
			}
			return true
		}
		i += 5
	}
	return false
}

func accepted(tool string) string {
	if tool == ToolCommit {
		return "only message and path"
	}
	return "only path"
}

// shortQuote quotes a caller-supplied field name, bounded so an abusive key
// cannot flood the result.
func shortQuote(s string) string {
	const limit = 64
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q…", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}

func invalidArgument(format string, v ...any) *diag.Error {
	return requestError(diag.ReasonInvalidArgument, fmt.Sprintf(format, v...))
}

func requestError(reason, message string) *diag.Error {
	return &diag.Error{
		Code:    diag.CodeInvalidRequest,
		Reason:  reason,
		Action:  diag.ActionFixRequest,
		Message: message,
	}
}
