package secrets

import "bytes"

// appendedClean reports whether new only appends to old and the appended
// lines hold no credential, which is then Added's answer (none) without
// its count of every line of both versions: an edit that appends to a
// long note is the common commit.
//
// Why that is exact: every line of new before the line the append starts
// in is a whole line of old, so Added never reports it; a rule looks back
// at most nearLines lines from the line it matches (forward only for a
// PEM block), so a scan of new from nearLines lines before the append
// sees every line and every context Added would. A finding in that part
// may still be a line old holds: the caller then asks Added.
func appendedClean(old, new []byte) bool {
	if len(old) == 0 || len(new) <= len(old) || !bytes.HasPrefix(new, old) {
		return false
	}
	from := bytes.LastIndexByte(old, '\n') + 1 // the start of the line the append begins in
	for range nearLines {
		if from == 0 {
			break
		}
		from = bytes.LastIndexByte(old[:from-1], '\n') + 1
	}
	return len(addedByLines(nil, new[from:])) == 0
}
