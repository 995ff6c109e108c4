package merge

import "bytes"

// Range is a one-based, inclusive line range.
type Range struct {
	Start int
	End   int
}

// TextResult is the outcome of a three-way text merge. Conflicts holds the
// line range of every conflict block written into Content, in order; it is
// empty for a clean merge.
type TextResult struct {
	Content   []byte
	Conflicts []Range
}

// Text merges local and remote edits of base line by line (diff3), byte for
// byte, with conflict blocks marked "<<<<<<< local", "=======", ">>>>>>> remote".
// It applies the notebook's own rules for concurrent additions: lines both
// sides only inserted at one place are all kept, remote's first, and lines
// common to the start or end of both insertions are written once. Content
// may share memory with the inputs when one side is unchanged.
func Text(base, local, remote []byte) TextResult { return mergeText(base, local, remote, false) }

// TextStrict merges as Text does but without the rules for concurrent
// additions: two insertions at one place conflict, as they do for
// `git merge-file`.
func TextStrict(base, local, remote []byte) TextResult {
	return mergeText(base, local, remote, true)
}

// mergeText runs the stages of a text merge (doc.go): split and intern the
// lines, diff base against each side, cut the result into segments (what
// both sides have, what one side changed, conflicts), shape the conflicts,
// and write.
func mergeText(base, local, remote []byte, strict bool) TextResult {
	// A side equal to base changed nothing: the other side is the merge,
	// and a file whose sides agree needs no merge either.
	switch {
	case bytes.Equal(local, base):
		return TextResult{Content: remote}
	case bytes.Equal(remote, base) || bytes.Equal(local, remote):
		return TextResult{Content: local}
	}
	in := newInterner()
	b := in.split(base)
	l, r := in.split(local), in.split(remote)
	m := &merger{d: newDiffer(in.nsym()), base: b, local: l, remote: r, strict: strict}
	el, er := m.d.lineDiff(b.sym, l.sym), m.d.lineDiff(b.sym, r.sym)
	// A region and the unchanged lines before it are two segments; only
	// conflicts add more.
	m.segs = make([]segment, 0, 2*(len(el)+len(er))+1)
	m.cut(window{span{0, b.n()}, span{0, l.n()}, span{0, r.n()}}, el, er)
	m.join()
	return m.write()
}
