package s3store

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A page of ListObjectsV2 is decoded by a scanner of its own: the only
// fields read are the root's IsTruncated and NextContinuationToken and each
// Contents' Key, Size and ETag. encoding/xml's reflection and token
// allocation cost more CPU than anything else a LIST does: 8% of a `serve`
// process's samples in the 50-writer contention row, where every commit
// lists the proposals. The scanner understands well-formed XML of the
// shapes S3 servers send (a declaration, comments, elements with or
// without attributes and namespace prefixes, self-closing elements, the
// five named entities and character references, CDATA); anything else it
// refuses, and the page is decoded by encoding/xml as before, so a page the
// scanner accepts decodes as encoding/xml would decode it (the tests
// compare the two).

// errListSyntax: the scanner met something it does not read.
var errListSyntax = errors.New("list page: not read by the scanner")

// decodeListPage decodes one page, by the scanner or, when it refuses the
// page, by encoding/xml.
func decodeListPage(data []byte) (s3ListPage, error) {
	if page, err := scanListPage(data); err == nil {
		return page, nil
	}
	var page s3ListPage
	err := xml.Unmarshal(data, &page)
	return page, err
}

// scanListPage is the scanner. Element names are compared by their local
// part, as encoding/xml matches a field's tag without a namespace; an
// element's text is its own character data, its children's left out, as
// encoding/xml gives a string field.
func scanListPage(data []byte) (s3ListPage, error) {
	var page s3ListPage
	var stack []listOpen // open elements, the root first
	var text []byte      // character data of the open elements, innermost last
	var entry s3ListEntry
	if !xmlChars(data) {
		return page, errListSyntax
	}
	rootDone := false
	i := 0
	for i < len(data) {
		if data[i] != '<' {
			j := bytes.IndexByte(data[i:], '<')
			if j < 0 {
				j = len(data) - i
			}
			if len(stack) == 0 {
				if len(bytes.TrimLeft(data[i:i+j], " \t\r\n")) > 0 {
					return page, errListSyntax
				}
			} else {
				var err error
				if text, err = appendText(text, data[i:i+j]); err != nil {
					return page, err
				}
			}
			i += j
			continue
		}
		rest := data[i:]
		switch {
		case bytes.HasPrefix(rest, []byte("<?")):
			// The declaration S3 servers send, before the root; any other
			// processing instruction is left to encoding/xml, which checks
			// a declaration's version and encoding.
			decl, ok := xmlDeclaration(rest)
			if !ok || len(stack) > 0 || rootDone {
				return page, errListSyntax
			}
			i += len(decl)
			continue
		case bytes.HasPrefix(rest, []byte("<!--")):
			j := bytes.Index(rest[4:], []byte("-->"))
			if j < 0 {
				return page, errListSyntax
			}
			i += 4 + j + 3
			continue
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			j := bytes.Index(rest[9:], []byte("]]>"))
			cdata := rest[9:max(9, 9+j)]
			if j < 0 || len(stack) == 0 || !utf8.Valid(cdata) || bytes.IndexByte(cdata, '\r') >= 0 {
				return page, errListSyntax
			}
			text = append(text, cdata...)
			i += 9 + j + 3
			continue
		case bytes.HasPrefix(rest, []byte("<!")):
			return page, errListSyntax // a DOCTYPE: left to encoding/xml
		}
		j := bytes.IndexByte(rest, '>')
		if j < 0 {
			return page, errListSyntax
		}
		tag := rest[1:j]
		i += j + 1
		if len(tag) > 0 && tag[0] == '/' {
			full, _, ok := tagName(tag[1:], false)
			if !ok || len(stack) == 0 || !bytes.Equal(stack[len(stack)-1].full, full) {
				return page, errListSyntax
			}
			top := stack[len(stack)-1]
			if err := endElement(&page, &entry, stack, text[top.text:]); err != nil {
				return page, err
			}
			stack, text = stack[:len(stack)-1], text[:top.text]
			rootDone = len(stack) == 0
			continue
		}
		selfClosing := len(tag) > 0 && tag[len(tag)-1] == '/'
		if selfClosing {
			tag = tag[:len(tag)-1]
		}
		full, name, ok := tagName(tag, true)
		if !ok || rootDone {
			return page, errListSyntax
		}
		stack = append(stack, listOpen{full, name, len(text)})
		if len(stack) == 2 && string(name) == "Contents" {
			entry = s3ListEntry{}
		}
		if selfClosing {
			if err := endElement(&page, &entry, stack, nil); err != nil {
				return page, err
			}
			stack = stack[:len(stack)-1]
			rootDone = len(stack) == 0
		}
	}
	if len(stack) != 0 || !rootDone {
		return page, errListSyntax
	}
	return page, nil
}

// xmlDeclaration returns the declaration that rest starts with, if it is
// one of the few the scanner reads: version 1.0, UTF-8 or no encoding.
func xmlDeclaration(rest []byte) ([]byte, bool) {
	for _, d := range [...]string{
		`<?xml version="1.0" encoding="UTF-8"?>`,
		`<?xml version="1.0" encoding="utf-8"?>`,
		`<?xml version="1.0"?>`,
	} {
		if bytes.HasPrefix(rest, []byte(d)) {
			return rest[:len(d)], true
		}
	}
	return nil, false
}

// listOpen is an open element of the scan: its name as written (which its
// end tag must repeat), its local name, and where its character data
// starts in the scan's text.
type listOpen struct {
	full, name []byte // slices of the page
	text       int
}

// endElement records the element closing at the top of the path (its
// ancestors' names before it), with text its own character data.
func endElement(page *s3ListPage, entry *s3ListEntry, path []listOpen, text []byte) error {
	name := path[len(path)-1].name
	switch len(path) {
	case 2:
		switch string(name) {
		case "Contents":
			page.Contents = append(page.Contents, *entry)
		case "IsTruncated":
			v, err := parseBool(text)
			if err != nil {
				return err
			}
			page.IsTruncated = v
		case "NextContinuationToken":
			page.NextContinuationToken = string(text)
		}
	case 3:
		if string(path[1].name) != "Contents" {
			return nil
		}
		switch string(name) {
		case "Key":
			entry.Key = string(text)
		case "ETag":
			entry.ETag = string(text)
		case "Size":
			v, err := parseInt(text)
			if err != nil {
				return err
			}
			entry.Size = v
		}
	}
	return nil
}

// parseBool and parseInt read a value as encoding/xml reads it into a
// field: empty text is the zero value, else the trimmed text is parsed.
func parseBool(text []byte) (bool, error) {
	if len(text) == 0 {
		return false, nil
	}
	v, err := strconv.ParseBool(strings.TrimSpace(string(text)))
	if err != nil {
		return false, errListSyntax
	}
	return v, nil
}

func parseInt(text []byte) (int64, error) {
	if len(text) == 0 {
		return 0, nil
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
	if err != nil {
		return 0, errListSyntax
	}
	return v, nil
}

// tagName returns the name as written and the local name of a start tag's
// content (name, then attributes when attrs) or an end tag's (name and
// spaces only). Attributes are checked only for their shape: name="value"
// or name='value'.
func tagName(tag []byte, attrs bool) (full, local []byte, ok bool) {
	n := 0
	for n < len(tag) && !isSpace(tag[n]) {
		n++
	}
	name := tag[:n]
	if !isASCIIName(name) {
		return nil, nil, false
	}
	rest := tag[n:]
	if !attrs {
		if len(bytes.TrimSpace(rest)) != 0 {
			return nil, nil, false
		}
	} else if !validAttrs(rest) {
		return nil, nil, false
	}
	local = name
	if k := bytes.IndexByte(name, ':'); k >= 0 {
		if k == 0 || k == len(name)-1 || bytes.IndexByte(name[k+1:], ':') >= 0 {
			return nil, nil, false
		}
		local = name[k+1:]
	}
	return name, local, true
}

// validAttrs checks the attributes of a start tag: each a name, '=' and a
// quoted value without '<' or '&' (no entity in an attribute is read,
// since none is used).
func validAttrs(b []byte) bool {
	for {
		b = bytes.TrimLeft(b, " \t\r\n")
		if len(b) == 0 {
			return true
		}
		eq := bytes.IndexByte(b, '=')
		if eq <= 0 || !isASCIIName(b[:eq]) {
			return false
		}
		b = b[eq+1:]
		if len(b) == 0 || b[0] != '"' && b[0] != '\'' {
			return false
		}
		end := bytes.IndexByte(b[1:], b[0])
		if end < 0 || bytes.ContainsAny(b[1:1+end], "<&") {
			return false
		}
		b = b[1+end+1:]
		if len(b) > 0 && !isSpace(b[0]) {
			return false
		}
	}
}

// isASCIIName reports whether b is an XML name made of ASCII only: a
// letter, '_' or ':' first, then letters, digits, '.', '-', '_' or ':'.
// Names with other characters are left to encoding/xml.
func isASCIIName(b []byte) bool {
	for i, c := range b {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '.' || c == '-')) {
			return false
		}
	}
	return len(b) > 0
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// appendText appends character data to text, expanding the five named
// entities and decimal or hexadecimal character references; carriage
// returns are normalised as XML requires (CR LF and a lone CR become LF).
func appendText(text, raw []byte) ([]byte, error) {
	if !utf8.Valid(raw) || bytes.Contains(raw, []byte("]]>")) {
		return text, errListSyntax
	}
	for len(raw) > 0 {
		k := bytes.IndexAny(raw, "&\r")
		if k < 0 {
			return append(text, raw...), nil
		}
		text = append(text, raw[:k]...)
		raw = raw[k:]
		if raw[0] == '\r' {
			text = append(text, '\n')
			raw = raw[1:]
			if len(raw) > 0 && raw[0] == '\n' {
				raw = raw[1:]
			}
			continue
		}
		semi := bytes.IndexByte(raw, ';')
		if semi < 0 {
			return text, errListSyntax
		}
		ref := string(raw[1:semi])
		raw = raw[semi+1:]
		switch ref {
		case "amp":
			text = append(text, '&')
		case "lt":
			text = append(text, '<')
		case "gt":
			text = append(text, '>')
		case "quot":
			text = append(text, '"')
		case "apos":
			text = append(text, '\'')
		default:
			num, ok := strings.CutPrefix(ref, "#")
			if !ok || num == "" {
				return text, errListSyntax
			}
			base := 10
			if h, ok := strings.CutPrefix(num, "x"); ok {
				num, base = h, 16
			}
			v, err := strconv.ParseUint(num, base, 32)
			if err != nil || num == "" || num[0] == '+' || num[0] == '-' || !isXMLChar(rune(v)) {
				return text, errListSyntax
			}
			text = utf8.AppendRune(text, rune(v))
		}
	}
	return text, nil
}

// xmlChars reports whether data is UTF-8 made only of characters XML
// allows, which encoding/xml checks in every part of a document (names,
// attribute values, comments, text).
func xmlChars(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 || !isXMLChar(r) {
			return false
		}
		i += n
	}
	return true
}

// isXMLChar reports whether r may appear in an XML document.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}
