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
	old, new = trimEqualLines(old, new) // equal versions leave nothing
	switch {
	case len(old) == 0:
		return CountLines(new), 0
	case len(new) == 0:
		return 0, CountLines(old)
	}
	return lineStat(old, new)
}

// lineStat counts the lines a shortest line diff of two non-empty
// versions inserts and deletes.
func lineStat(old, new []byte) (insertions, deletions int) {
	in := newInterner()
	a, b := in.split(old), in.split(new)
	for _, e := range newDiffer(in.nsym()).lineDiff(a.sym, b.sym) {
		insertions += e.new.len()
		deletions += e.old.len()
	}
	return insertions, deletions
}

// trimEqualLines drops the whole lines old and new share at their start
// and then at their end, compared as bytes. The line diff drops the same
// lines before it diffs (the common prefix and suffix of the two line
// sequences), so the counts are unchanged; what is saved is splitting
// and hashing them, which for an append to a long note is nearly all of
// the work.
func trimEqualLines(old, new []byte) ([]byte, []byte) {
	// The prefix ends after the last LF both share: each line before it
	// is whole and equal in both.
	p := CommonPrefix(old, new)
	p = bytes.LastIndexByte(old[:p], '\n') + 1
	old, new = old[p:], new[p:]
	// The suffix starts at the first line start inside the bytes both end
	// with: after the first LF of that run, unless the run begins at a
	// line start in both (the start of what is left, or after an LF).
	k := CommonSuffix(old, new)
	i, j := len(old)-k, len(new)-k
	if (i > 0 && old[i-1] != '\n') || (j > 0 && new[j-1] != '\n') {
		lf := bytes.IndexByte(old[i:], '\n')
		if lf < 0 {
			return old, new
		}
		i, j = i+lf+1, j+lf+1
	}
	return old[:i], new[:j]
}
