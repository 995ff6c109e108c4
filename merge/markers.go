package merge

import "bytes"

// ScanMarkers returns the line range of every complete conflict block in
// content: a line "<<<<<<< local", later a line "=======", later a line
// ">>>>>>> remote", each exactly that at column 0 and ended by LF, CRLF or
// the end of the content (an editor that drops the final newline must not
// make a block invisible). A second "<<<<<<< local" before the block closes
// starts the block afresh (blocks do not nest); a close without a separator
// closes nothing. Extra "=======" lines inside a block are content (a
// markdown heading underline, say), so they do not break it.
func ScanMarkers(content []byte) []Range {
	var ranges []Range
	open, sep := 0, false // open: line number of the pending "<<<<<<< local", 0 if none
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
			open, sep = line, false
		case markerSep:
			sep = open > 0
		case markerRemote:
			if open > 0 && sep {
				ranges = append(ranges, Range{Start: open, End: line})
			}
			open, sep = 0, false
		}
		off = next
	}
	return ranges
}
