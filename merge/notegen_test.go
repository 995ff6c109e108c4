package merge

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// noteCase is one generated merge: three versions of a note.
type noteCase struct {
	name                string
	base, local, remote []byte
}

// noteGen generates realistic note edits from a seed: markdown headings,
// paragraphs, lists, tables and code fences separated by blank lines, edited
// on each side by appends, distant and adjacent edits, identical edits and
// overlaps; some cases use CRLF, drop the final newline, or start from an
// empty base (add/add).
type noteGen struct{ r *rand.Rand }

func newNoteGen(seed uint64) *noteGen {
	return &noteGen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

var words = strings.Fields(`the a notebook agent merge line commit pull remote local file note
	todo done fix check test build run deploy review plan idea meeting status next
	alpha beta gamma delta server client store pack chunk tree index cache retry
	error result output input value config path user team week day 1 2 3 42 2026`)

func (g *noteGen) word() string { return words[g.r.IntN(len(words))] }

func (g *noteGen) sentence(min, max int) string {
	n := min + g.r.IntN(max-min+1)
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	return strings.Join(w, " ")
}

// block returns one markdown block (without the blank line after it).
func (g *noteGen) block() []string {
	switch g.r.IntN(7) {
	case 0:
		return []string{strings.Repeat("#", 1+g.r.IntN(3)) + " " + g.sentence(1, 4)}
	case 1, 2:
		lines := make([]string, 1+g.r.IntN(3))
		for i := range lines {
			lines[i] = g.sentence(4, 12)
		}
		return lines
	case 3:
		lines := make([]string, 2+g.r.IntN(4))
		for i := range lines {
			lines[i] = []string{"- ", "* ", "- [ ] ", "- [x] ", "1. "}[g.r.IntN(5)] + g.sentence(2, 7)
		}
		return lines
	case 4:
		lines := []string{"| " + g.word() + " | " + g.word() + " |", "| --- | --- |"}
		for range 1 + g.r.IntN(4) {
			lines = append(lines, "| "+g.word()+" | "+g.word()+" |")
		}
		return lines
	case 5:
		lines := []string{"```go"}
		for range 1 + g.r.IntN(4) {
			lines = append(lines, "\t"+g.word()+"("+g.word()+")")
		}
		if g.r.IntN(2) == 0 {
			lines = append(lines, "}")
		}
		return append(lines, "```")
	default:
		return []string{[]string{"---", "> " + g.sentence(3, 8), "", "}"}[g.r.IntN(4)]}
	}
}

func (g *noteGen) doc(blocks int) []string {
	var lines []string
	for i := 0; i < blocks; i++ {
		if i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, g.block()...)
	}
	return lines
}

// edit is one change to a line slice, applied at a position.
type edit func(lines []string, at int) []string

func (g *noteGen) randomEdit() edit {
	switch g.r.IntN(9) {
	case 8: // rewrite a section: many new lines with blank lines among them
		n, b := 4+g.r.IntN(10), g.doc(2+g.r.IntN(4))
		return func(l []string, at int) []string {
			i := at % (len(l) + 1)
			j := min(len(l), i+n)
			return insert(append(clone(l[:i]), l[j:]...), i, b...)
		}
	case 0: // modify a line
		s := g.sentence(2, 8)
		return func(l []string, at int) []string {
			if len(l) == 0 {
				return []string{s}
			}
			l = clone(l)
			l[at%len(l)] = s
			return l
		}
	case 1: // change a word in a line
		w := g.word()
		return func(l []string, at int) []string {
			if len(l) == 0 {
				return []string{w}
			}
			l = clone(l)
			l[at%len(l)] += " " + w
			return l
		}
	case 2: // insert a line
		s := g.sentence(2, 8)
		return func(l []string, at int) []string { return insert(l, at%(len(l)+1), s) }
	case 3: // insert a block with a blank line after it
		b := append(g.block(), "")
		return func(l []string, at int) []string { return insert(l, at%(len(l)+1), b...) }
	case 4: // delete a line
		return func(l []string, at int) []string {
			if len(l) == 0 {
				return l
			}
			i := at % len(l)
			return append(clone(l[:i]), l[i+1:]...)
		}
	case 5: // delete a few lines
		n := 2 + g.r.IntN(3)
		return func(l []string, at int) []string {
			if len(l) == 0 {
				return l
			}
			i := at % len(l)
			j := min(len(l), i+n)
			return append(clone(l[:i]), l[j:]...)
		}
	case 6: // append at the end
		b := append([]string{""}, g.block()...)
		return func(l []string, _ int) []string { return insert(l, len(l), b...) }
	default: // list item added
		s := "- " + g.sentence(2, 6)
		return func(l []string, at int) []string { return insert(l, at%(len(l)+1), s) }
	}
}

func clone(l []string) []string { return append([]string(nil), l...) }

func insert(l []string, at int, add ...string) []string {
	out := make([]string, 0, len(l)+len(add))
	out = append(out, l[:at]...)
	out = append(out, add...)
	return append(out, l[at:]...)
}

// next generates the i-th case.
func (g *noteGen) next(i int) noteCase {
	var base []string
	addAdd := g.r.IntN(20) == 0
	if !addAdd {
		base = g.doc(3 + g.r.IntN(10))
	}
	local, remote := base, base
	focus := g.r.IntN(len(base) + 1)
	nEdits := func() int { return 1 + g.r.IntN(3) }
	kind := g.r.IntN(5)
	switch kind {
	case 0: // distant edits anywhere
		for range nEdits() {
			local = g.randomEdit()(local, g.r.IntN(len(local)+1))
		}
		for range nEdits() {
			remote = g.randomEdit()(remote, g.r.IntN(len(remote)+1))
		}
	case 1, 2: // edits near one spot: adjacency and overlaps
		for range nEdits() {
			local = g.randomEdit()(local, max(0, focus+g.r.IntN(7)-3))
		}
		for range nEdits() {
			remote = g.randomEdit()(remote, max(0, focus+g.r.IntN(7)-3))
		}
	case 3: // an identical edit on both sides, plus others
		e, at := g.randomEdit(), g.r.IntN(len(base)+1)
		local, remote = e(local, at), e(remote, at)
		if g.r.IntN(2) == 0 {
			local = g.randomEdit()(local, g.r.IntN(len(local)+1))
		} else {
			remote = g.randomEdit()(remote, g.r.IntN(len(remote)+1))
		}
	default: // both append
		local = g.randomEdit()(local, len(local))
		remote = insert(remote, len(remote), append([]string{""}, g.block()...)...)
	}
	if addAdd {
		local = g.doc(1 + g.r.IntN(4))
		if g.r.IntN(3) == 0 {
			remote = local
			remote = g.randomEdit()(remote, g.r.IntN(len(remote)+1))
		} else {
			remote = g.doc(1 + g.r.IntN(4))
		}
	}
	eol := "\n"
	if g.r.IntN(10) == 0 {
		eol = "\r\n"
	}
	noFinal := [3]bool{}
	if g.r.IntN(8) == 0 {
		for j := range noFinal {
			noFinal[j] = g.r.IntN(2) == 0
		}
	}
	join := func(l []string, noLF bool) []byte {
		if len(l) == 0 {
			return nil
		}
		s := strings.Join(l, eol) + eol
		if noLF {
			s = strings.TrimSuffix(s, eol)
		}
		return []byte(s)
	}
	return noteCase{
		name:   fmt.Sprintf("case%04d-kind%d", i, kind),
		base:   join(base, noFinal[0]),
		local:  join(local, noFinal[1]),
		remote: join(remote, noFinal[2]),
	}
}
