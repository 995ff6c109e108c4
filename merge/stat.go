package merge

import "bytes"

// CountLines counts lines by the diffstat rule: a final run without LF is a
// line; empty content has none.
func CountLines(content []byte) int {
	n := bytes.Count(content, []byte{'\n'})
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	return n
}

// Stat returns the inserted and deleted lines between two versions of a file
// (nil old: added file; nil new: removed file). Lines are compared byte for
// byte, so a changed line ending or a final newline added to the last line
// counts as one deletion and one insertion.
func Stat(old, new []byte) (insertions, deletions int) {
	switch {
	case bytes.Equal(old, new):
		return 0, 0
	case len(old) == 0:
		return CountLines(new), 0
	case len(new) == 0:
		return 0, CountLines(old)
	}
	in := newInterner()
	a, b := in.split(old), in.split(new)
	for _, e := range newDiffer(in.nsym()).lineDiff(a.sym, b.sym) {
		insertions += e.new.len()
		deletions += e.old.len()
	}
	return insertions, deletions
}
