package secrets

import "bytes"

// appendedClean reports whether new only appends to old and the appended
// lines hold no credential, which is then Added's answer (none) without
// its count of every line of both versions: an edit that appends to a
// long note is the common commit.
//
// Why that is exact: every line of new before the line the append starts
// in is a whole line of old; a credential Added reports holds an added
// line, and starts at most maxPEMLines lines before it (a PEM block's
// BEGIN line; an AWS pair within nearLines), so a scan of new from
// maxPEMLines lines before the append sees every line and every context
// Added would. A finding in that part may be made of lines old holds
// only: the caller then asks Added.
func appendedClean(old, new []byte) bool {
	if len(old) == 0 || len(new) <= len(old) || !bytes.HasPrefix(new, old) {
		return false
	}
	from := bytes.LastIndexByte(old, '\n') + 1 // the start of the line the append begins in
	for range maxPEMLines {
		if from == 0 {
			break
		}
		from = bytes.LastIndexByte(old[:from-1], '\n') + 1
	}
	return len(addedByLines(nil, new[from:])) == 0
}
