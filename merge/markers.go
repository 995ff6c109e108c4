package merge

import "bytes"

// ScanMarkers returns the line range of every conflict block in content,
// nested or not. A marker line is exactly "<<<<<<< local", "=======" or
// ">>>>>>> remote" at column 0, ended by LF, CRLF or the end of the content
// (an editor that drops the final newline must not make a block
// invisible); changing one character of a marker line makes it text.
//
// Opens and closes are counted like brackets: a block runs from an open at
// depth 0 to the close that brings the depth back to 0, and it is reported
// when a separator appeared inside it, so a block written inside a side of
// another (what an old merge of a file still holding blocks wrote) is one
// range covering every marker line of both. An open never closed does not
// hide a block after it: the unclosed run is reported starting at its first open
// to the last close that follows a separator, when there is one. A close
// without a separator closes nothing visible; extra "=======" lines inside
// a block are content (a markdown heading underline, say).
func ScanMarkers(content []byte) []Range {
	var ranges []Range
	start, depth := 0, 0 // start: line of the open that began the current run
	sep := false         // a separator appeared in the current run
	lastClose := 0       // the last close after a separator in the current run
	line := 0
	for off := 0; off < len(content); {
		end := len(content)
		next := end
		if i := bytes.IndexByte(content[off:], '\n'); i >= 0 {
			end, next = off+i, off+i+1
		}
		line++
		text := content[off:end]
		if len(text) > 0 && text[len(text)-1] == '\r' && end < len(content) {
			text = text[:len(text)-1]
		}
		switch string(text) {
		case markerLocal:
			if depth == 0 {
				start, sep, lastClose = line, false, 0
			}
			depth++
		case markerSep:
			sep = sep || depth > 0
		case markerRemote:
			if depth == 0 {
				break
			}
			if sep {
				lastClose = line
			}
			if depth--; depth == 0 {
				if sep {
					ranges = append(ranges, Range{Start: start, End: line})
				}
				start, sep, lastClose = 0, false, 0
			}
		}
		off = next
	}
	if depth > 0 && lastClose > 0 {
		ranges = append(ranges, Range{Start: start, End: lastClose})
	}
	return ranges
}

// HasMarkers reports whether content holds a conflict block (ScanMarkers).
func HasMarkers(content []byte) bool { return len(ScanMarkers(content)) > 0 }
