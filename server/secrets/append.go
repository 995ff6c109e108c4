package secrets

import "bytes"

// appendedClean reports whether new only appends to old and the appended
// lines hold no credential, which is then Added's answer (none) without
// its count of every line of both versions: an edit that appends to a
// long note is the common commit.
//
// Why that is exact: every line of new before the line the append starts
// in is a whole line of old; a credential Added reports holds an added
// line, and starts at most nearLines lines before it (an AWS pair), or
// maxPEMLines lines before it for a PEM block, whose BEGIN line then lies
// in that stretch. So a scan of new from nearLines lines before the
// append, or from maxPEMLines lines before it when a BEGIN line may lie
// there, sees every line and every context Added would. A finding in that
// part may be made of lines old holds only: the caller then asks Added.
func appendedClean(old, new []byte) bool {
	if len(old) == 0 || len(new) <= len(old) || !bytes.HasPrefix(new, old) {
		return false
	}
	from := bytes.LastIndexByte(old, '\n') + 1 // the start of the line the append begins in
	near := -1                                 // nearLines lines before the append
	for i := 0; i < maxPEMLines && from > 0; i++ {
		from = bytes.LastIndexByte(old[:from-1], '\n') + 1
		if i == nearLines-1 {
			near = from
		}
	}
	if near < 0 {
		near = from // old has fewer lines than that
	}
	if from < near && !bytes.Contains(new[from:min(len(new), near+len(pemMarker)-1)], []byte(pemMarker)) {
		from = near // no PEM block can start before the AWS context: scan only that
	}
	return len(addedByLines(nil, new[from:])) == 0
}

// pemMarker starts every PEM BEGIN line.
const pemMarker = "-----BEGIN "
