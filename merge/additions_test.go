package merge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Where both sides only inserted lines at one base position, Text keeps
// both, remote's first, and is clean; lines both insertions start or end
// with are written once. TextStrict conflicts there as git does.
func TestTextConcurrentAdditions(t *testing.T) {
	log := lines("# Log", "", "- started")
	for _, tc := range []struct {
		name                string
		base, local, remote []byte
		want                []byte
		conflicts           []Range // nil: clean
		strictConflicts     bool    // whether TextStrict conflicts
	}{
		{
			name:            "both append at the end",
			base:            log,
			local:           lines("# Log", "", "- started", "- local entry"),
			remote:          lines("# Log", "", "- started", "- remote entry"),
			want:            lines("# Log", "", "- started", "- remote entry", "- local entry"),
			strictConflicts: true,
		},
		{
			// The blank line both sides start with is a line both
			// wrote: it is written once, never doubled.
			name:            "both append paragraphs after a blank line",
			base:            lines("# Log", "", "first entry"),
			local:           lines("# Log", "", "first entry", "", "## local", "text L"),
			remote:          lines("# Log", "", "first entry", "", "## remote", "text R"),
			want:            lines("# Log", "", "first entry", "", "## remote", "text R", "## local", "text L"),
			strictConflicts: true,
		},
		{
			name:            "both append, with the same closing lines",
			base:            lines("# Log"),
			local:           lines("# Log", "- a", "", "---"),
			remote:          lines("# Log", "- b", "", "---"),
			want:            lines("# Log", "- b", "- a", "", "---"),
			strictConflicts: true,
		},
		{
			name:            "one insertion inside the other: the longer once",
			base:            log,
			local:           lines("# Log", "", "- started", "- x"),
			remote:          lines("# Log", "", "- started", "- w", "- x", "- y"),
			want:            lines("# Log", "", "- started", "- w", "- x", "- y"),
			strictConflicts: true,
		},
		{
			name:            "both append to a base without a final newline",
			base:            []byte("# Log\n- started"),
			local:           []byte("# Log\n- started\n- local entry\n"),
			remote:          []byte("# Log\n- started\n- remote entry\n"),
			want:            []byte("# Log\n- started\n- remote entry\n- local entry\n"),
			strictConflicts: true,
		},
		{
			name:            "both append without a final newline of their own",
			base:            log,
			local:           []byte("# Log\n\n- started\n- local entry"),
			remote:          []byte("# Log\n\n- started\n- remote entry"),
			want:            []byte("# Log\n\n- started\n- remote entry\n- local entry"),
			strictConflicts: true,
		},
		{
			name:            "both add under the same heading",
			base:            lines("# Todo", "- a", "", "# Done", "- z"),
			local:           lines("# Todo", "- a", "- from local", "", "# Done", "- z"),
			remote:          lines("# Todo", "- a", "- from remote", "", "# Done", "- z"),
			want:            lines("# Todo", "- a", "- from remote", "- from local", "", "# Done", "- z"),
			strictConflicts: true,
		},
		{
			name:   "one side appends, the other edits a distant line",
			base:   lines("# Log", "status: draft", "", "- started"),
			local:  lines("# Log", "status: done", "", "- started"),
			remote: lines("# Log", "status: draft", "", "- started", "- remote entry"),
			want:   lines("# Log", "status: done", "", "- started", "- remote entry"),
		},
		{
			name:            "an insertion next to a line the other side modified still conflicts",
			base:            lines("a", "b", "c"),
			local:           lines("a", "b", "new", "c"),
			remote:          lines("a", "b", "C"),
			want:            lines("a", "b", "<<<<<<< local", "new", "c", "=======", "C", ">>>>>>> remote"),
			conflicts:       []Range{{3, 8}},
			strictConflicts: true,
		},
		{
			name:            "an append after a line the other side deleted still conflicts",
			base:            lines("a", "b", "c"),
			local:           lines("a", "b", "c", "d"),
			remote:          lines("a", "b"),
			want:            lines("a", "b", "<<<<<<< local", "c", "d", "=======", ">>>>>>> remote"),
			conflicts:       []Range{{3, 7}},
			strictConflicts: true,
		},
		{
			name:   "identical insertions once",
			base:   log,
			local:  lines("# Log", "", "- started", "- same"),
			remote: lines("# Log", "", "- started", "- same"),
			want:   lines("# Log", "", "- started", "- same"),
		},
		{
			name:            "one insertion the start of the other: the longer once",
			base:            log,
			local:           lines("# Log", "", "- started", "- x"),
			remote:          lines("# Log", "", "- started", "- x", "- y"),
			want:            lines("# Log", "", "- started", "- x", "- y"),
			strictConflicts: true,
		},
		{
			name:            "one insertion the end of the other: the longer once",
			base:            log,
			local:           lines("# Log", "", "- started", "- w", "- x", "- y"),
			remote:          lines("# Log", "", "- started", "- x", "- y"),
			want:            lines("# Log", "", "- started", "- w", "- x", "- y"),
			strictConflicts: true,
		},
		{
			name:            "CRLF files",
			base:            []byte("# Log\r\n- started\r\n"),
			local:           []byte("# Log\r\n- started\r\n- local\r\n"),
			remote:          []byte("# Log\r\n- started\r\n- remote\r\n"),
			want:            []byte("# Log\r\n- started\r\n- remote\r\n- local\r\n"),
			strictConflicts: true,
		},
		{
			name:            "CRLF sides without a final newline",
			base:            []byte("# Log\r\n"),
			local:           []byte("# Log\r\n- local"),
			remote:          []byte("# Log\r\n- remote"),
			want:            []byte("# Log\r\n- remote\r\n- local"),
			strictConflicts: true,
		},
		{
			name:            "empty base: the shared first line once, then remote's lines, then local's",
			local:           lines("# Notes", "mine"),
			remote:          lines("# Notes", "theirs"),
			want:            lines("# Notes", "theirs", "mine"),
			strictConflicts: true,
		},
		{
			name:            "empty base: two agents create the same log",
			local:           []byte("# Log\n- started\n- a\n"),
			remote:          []byte("# Log\n- started\n- b\n"),
			want:            []byte("# Log\n- started\n- b\n- a\n"),
			strictConflicts: true,
		},
		{
			name:            "empty base: shared first and last lines once",
			local:           lines("# Log", "- a", "end"),
			remote:          lines("# Log", "- b", "- c", "end"),
			want:            lines("# Log", "- b", "- c", "- a", "end"),
			strictConflicts: true,
		},
		{
			name:            "base without a final newline: shared lines after it once",
			base:            []byte("# Log"),
			local:           []byte("# Log\n- started\n- a\n"),
			remote:          []byte("# Log\n- started\n- b\n"),
			want:            []byte("# Log\n- started\n- b\n- a\n"),
			strictConflicts: true,
		},
		{
			name:            "empty base: one file the start of the other",
			local:           lines("# Notes"),
			remote:          lines("# Notes", "theirs"),
			want:            lines("# Notes", "theirs"),
			strictConflicts: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(tc.base, tc.local, tc.remote)
			if !bytes.Equal(got.Content, tc.want) {
				t.Errorf("content:\n%q\nwant:\n%q", got.Content, tc.want)
			}
			if !equalRanges(got.Conflicts, tc.conflicts) {
				t.Errorf("conflicts %v, want %v", got.Conflicts, tc.conflicts)
			}
			if strict := TextStrict(tc.base, tc.local, tc.remote); (len(strict.Conflicts) > 0) != tc.strictConflicts {
				t.Errorf("TextStrict conflicts %v, want conflicts: %v", strict.Conflicts, tc.strictConflicts)
			} else if !tc.strictConflicts && !bytes.Equal(strict.Content, got.Content) {
				t.Errorf("TextStrict %q differs from Text where both are clean", strict.Content)
			}
		})
	}
}

// TestTextAdditionsProperty merges generated notes with Text. Whenever the
// merge is clean, comparing lines by content without their line end: every line that was in no input's base and that one side
// added once is in the result once; a line both sides added is there at
// least as often as on either side and at most as often as on both; the
// base lines neither side's diff touched are in the result in order. And
// where TextStrict is clean, Text gives the same bytes: rule 6 only
// changes merges git's rules would conflict on.
func TestTextAdditionsProperty(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	g := newNoteGen(16)
	cleanByRule6 := 0
	for i := range n {
		c := g.next(i)
		got := Text(c.base, c.local, c.remote)
		strict := TextStrict(c.base, c.local, c.remote)
		if len(strict.Conflicts) == 0 {
			if !bytes.Equal(got.Content, strict.Content) || len(got.Conflicts) != 0 {
				t.Fatalf("%s: Text differs from TextStrict on a merge both rules make clean", c.name)
			}
		} else if len(got.Conflicts) == 0 {
			cleanByRule6++
		}
		if len(got.Conflicts) != 0 {
			continue
		}
		count := func(b []byte) map[string]int {
			m := map[string]int{}
			for _, l := range splitAll(b) {
				// By content: a last line without LF gets one when
				// the other side's lines follow it.
				m[string(bytes.TrimRight(l, "\r\n"))]++
			}
			return m
		}
		inBase, inLocal, inRemote, inResult := count(c.base), count(c.local), count(c.remote), count(got.Content)
		for line, l := range inLocal {
			if inBase[line] > 0 {
				continue
			}
			r := inRemote[line]
			if got := inResult[line]; got < max(l, r) || got > l+r {
				t.Fatalf("%s: added line %q is %d times in the result, %d in local, %d in remote", c.name, line, got, l, r)
			}
		}
		for line, r := range inRemote {
			if inBase[line] == 0 && inLocal[line] == 0 && inResult[line] != r {
				t.Fatalf("%s: remote's added line %q is %d times in the result, %d in remote", c.name, line, inResult[line], r)
			}
		}
		if !untouchedInOrder(c.base, c.local, c.remote, got.Content) {
			t.Fatalf("%s: base lines neither side changed are not all in the result in order", c.name)
		}
	}
	t.Logf("%d of %d merges clean by rule 6 that git's rules conflict on", cleanByRule6, n)
	if cleanByRule6 == 0 {
		t.Fatal("the generator made no merge that rule 6 decides")
	}
}

// splitAll splits b into lines as the merge does.
func splitAll(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// untouchedInOrder reports whether the base lines that neither side's
// diff changes are a subsequence of result.
func untouchedInOrder(base, local, remote, result []byte) bool {
	in := newInterner()
	b, l, r, out := in.split(base), in.split(local), in.split(remote), in.split(result)
	touched := make([]bool, b.n())
	d := newDiffer(in.nsym())
	for _, side := range []*text{l, r} {
		for _, c := range d.lineDiff(b.sym, side.sym) {
			for k := c.old.lo; k < c.old.hi; k++ {
				touched[k] = true
			}
		}
	}
	j := 0
	for i, s := range b.sym {
		if touched[i] {
			continue
		}
		for j < out.n() && out.sym[j] != s {
			j++
		}
		if j == out.n() {
			return false
		}
		j++
	}
	return true
}

// TestTextAgreesWithStrictOnBlankLineShapes holds the rule that rules 6
// and 7 only decide what rules 1-5 conflict on, on the shapes the note
// generator rarely makes: few distinct lines, mostly blank, so that many
// equally short diffs exist and go-diff's first pick makes the two sides'
// additions touch. The pinned case is the first the fuzzer found: Text
// kept its first diffs and merged the touching additions by rule 6, where
// TextStrict untangled them into a clean merge with other bytes.
func TestTextAgreesWithStrictOnBlankLineShapes(t *testing.T) {
	check := func(name string, base, local, remote []byte) {
		t.Helper()
		strict := TextStrict(base, local, remote)
		if len(strict.Conflicts) != 0 {
			return
		}
		if got := Text(base, local, remote); !bytes.Equal(got.Content, strict.Content) || len(got.Conflicts) != 0 {
			t.Fatalf("%s: base %q local %q remote %q: TextStrict clean %q, Text %q %v", name, base, local, remote, strict.Content, got.Content, got.Conflicts)
		}
	}
	check("pinned", []byte("1\n\n1\n\n\n"), []byte("1\n\n1\n## h\n\n\n\n\n## h\n\n"), []byte("1\n\n1\n\n\n1\n\n1\n2\n"))

	n := 20000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(20261206, 0))
	lines := []string{"1\n", "\n", "\n", "\n", "## h\n", "2\n"}
	line := func() string { return lines[rng.IntN(len(lines))] }
	edit := func(base []string) []byte {
		out := slices.Clone(base)
		for k := rng.IntN(3) + 1; k > 0; k-- {
			i := rng.IntN(len(out) + 1)
			switch rng.IntN(3) {
			case 0:
				out = slices.Insert(out, i, line())
			case 1:
				if i < len(out) {
					out = slices.Delete(out, i, i+1)
				}
			default:
				for j := rng.IntN(4); j >= 0; j-- {
					out = slices.Insert(out, i, line())
				}
			}
		}
		return []byte(strings.Join(out, ""))
	}
	for i := range n {
		base := make([]string, rng.IntN(14))
		for j := range base {
			base[j] = line()
		}
		check(fmt.Sprintf("case %d (seed 20261206)", i), []byte(strings.Join(base, "")), edit(base), edit(base))
	}
}
