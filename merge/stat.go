package merge

// CountLines counts lines by the diffstat rule: a final run without LF is a
// line; empty content has none.
func CountLines(content []byte) int { panic("merge: CountLines not implemented yet") }

// Stat returns the inserted and deleted lines between two versions of a file
// (nil old: added file; nil new: removed file).
func Stat(old, new []byte) (insertions, deletions int) { panic("merge: Stat not implemented yet") }
