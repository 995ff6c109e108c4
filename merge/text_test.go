package merge

import (
	"bytes"
	"strings"
	"testing"
)

// lines joins its arguments, each followed by LF.
func lines(ls ...string) []byte {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l + "\n")
	}
	return []byte(b.String())
}

func TestTextMerges(t *testing.T) {
	base := lines("# Plan", "", "one", "two", "three", "four", "five")
	for _, tc := range []struct {
		name          string
		local, remote []byte
		want          []byte
		conflicts     []Range
	}{
		{
			name:   "distant edits both survive",
			local:  lines("# Plan", "", "ONE", "two", "three", "four", "five"),
			remote: lines("# Plan", "", "one", "two", "three", "four", "FIVE"),
			want:   lines("# Plan", "", "ONE", "two", "three", "four", "FIVE"),
		},
		{
			name:   "one unchanged line between edits is enough",
			local:  lines("# Plan", "", "one", "TWO", "three", "four", "five"),
			remote: lines("# Plan", "", "one", "two", "three", "FOUR", "five"),
			want:   lines("# Plan", "", "one", "TWO", "three", "FOUR", "five"),
		},
		{
			name:   "identical edits are taken once",
			local:  lines("# Plan", "", "one", "2", "three", "four", "five", "six"),
			remote: lines("# Plan", "", "one", "2", "three", "four", "five", "six"),
			want:   lines("# Plan", "", "one", "2", "three", "four", "five", "six"),
		},
		{
			name:   "touching edits conflict",
			local:  lines("# Plan", "", "one", "TWO", "three", "four", "five"),
			remote: lines("# Plan", "", "one", "two", "THREE", "four", "five"),
			want: lines("# Plan", "", "one", "<<<<<<< local", "TWO", "three", "=======",
				"two", "THREE", ">>>>>>> remote", "four", "five"),
			conflicts: []Range{{4, 10}},
		},
		{
			name:   "insertion next to a modified line conflicts",
			local:  lines("# Plan", "", "one", "two", "new", "three", "four", "five"),
			remote: lines("# Plan", "", "one", "two", "THREE", "four", "five"),
			want: lines("# Plan", "", "one", "two", "<<<<<<< local", "new", "three", "=======",
				"THREE", ">>>>>>> remote", "four", "five"),
			conflicts: []Range{{5, 10}},
		},
		{
			name:   "common lines of both sides stay outside the block",
			local:  lines("# Plan", "", "one", "same", "mine", "five"),
			remote: lines("# Plan", "", "one", "same", "theirs", "five"),
			want: lines("# Plan", "", "one", "same", "<<<<<<< local", "mine", "=======",
				"theirs", ">>>>>>> remote", "five"),
			conflicts: []Range{{5, 9}},
		},
		{
			name:   "overlapping changes that end equal are clean",
			local:  lines("# Plan", "", "one", "X", "three", "four", "five"),
			remote: lines("# Plan", "", "one", "X", "three", "four", "five"),
			want:   lines("# Plan", "", "one", "X", "three", "four", "five"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(base, tc.local, tc.remote)
			if !bytes.Equal(got.Content, tc.want) {
				t.Errorf("content:\n%s\nwant:\n%s", got.Content, tc.want)
			}
			if !equalRanges(got.Conflicts, tc.conflicts) {
				t.Errorf("conflicts %v, want %v", got.Conflicts, tc.conflicts)
			}
		})
	}
}

func equalRanges(a, b []Range) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A blank-line-separated block added next to a concurrent edit is placed
// where git places it (slid down past the blank line), so the merge is
// clean.
func TestTextSlidesHunksLikeGit(t *testing.T) {
	base := lines("a", "", "b", "", "c")
	local := lines("a", "", "b", "", "new", "", "c") // a block after "b"
	remote := lines("a", "", "B", "", "c")           // b edited
	want := lines("a", "", "B", "", "new", "", "c")
	got := Text(base, local, remote)
	if !bytes.Equal(got.Content, want) || len(got.Conflicts) != 0 {
		t.Fatalf("got %q %v, want %q clean", got.Content, got.Conflicts, want)
	}
}

func TestTextConflictsJoinAcrossPunctuation(t *testing.T) {
	base := lines("a", "{", "}", "---", "", "d")
	local := lines("A", "{", "}", "---", "", "D")
	remote := lines("a1", "{", "}", "---", "", "d1")
	got := Text(base, local, remote)
	// Only lines without letters or digits separate the two conflicts: one block.
	want := lines("<<<<<<< local", "A", "{", "}", "---", "", "D", "=======",
		"a1", "{", "}", "---", "", "d1", ">>>>>>> remote")
	if !bytes.Equal(got.Content, want) {
		t.Fatalf("conflicts %v, want one joined block:\n%s", got.Conflicts, got.Content)
	}
	// With letters in four separating lines, they stay apart.
	base = lines("a", "w", "x", "y", "z", "d")
	local = lines("A", "w", "x", "y", "z", "D")
	remote = lines("a1", "w", "x", "y", "z", "d1")
	if got := Text(base, local, remote); len(got.Conflicts) != 2 {
		t.Fatalf("conflicts %v, want two blocks:\n%s", got.Conflicts, got.Content)
	}
}

func TestTextIsByteExact(t *testing.T) {
	// CRLF lines, a trailing space, a tab, a final line without LF.
	base := []byte("a\r\nb \r\nc\td\r\nlast")
	local := []byte("A\r\nb \r\nc\td\r\nlast")
	remote := []byte("a\r\nb \r\nc\td\r\nlast line")
	want := []byte("A\r\nb \r\nc\td\r\nlast line")
	if got := Text(base, local, remote); !bytes.Equal(got.Content, want) {
		t.Fatalf("got %q, want %q", got.Content, want)
	}
}

func TestTextMarkersFollowCRLF(t *testing.T) {
	base := []byte("a\r\nb\r\nc\r\n")
	local := []byte("a\r\nL\r\nc\r\n")
	remote := []byte("a\r\nR\r\nc\r\n")
	want := []byte("a\r\n<<<<<<< local\r\nL\r\n=======\r\nR\r\n>>>>>>> remote\r\nc\r\n")
	got := Text(base, local, remote)
	if !bytes.Equal(got.Content, want) {
		t.Fatalf("got %q, want %q", got.Content, want)
	}
	if !equalRanges(got.Conflicts, []Range{{2, 6}}) {
		t.Fatalf("conflicts %v", got.Conflicts)
	}
}

func TestTextNoFinalNewline(t *testing.T) {
	// A clean merge ends as the chosen text ends.
	got := Text([]byte("a\nb\nc"), []byte("A\nb\nc"), []byte("a\nb\nC"))
	if want := "A\nb\nC"; string(got.Content) != want {
		t.Fatalf("clean: got %q, want %q", got.Content, want)
	}
	// Inside a block a side without LF gets one before the next marker.
	got = Text([]byte("a\nb"), []byte("a\nL"), []byte("a\nR"))
	if want := "a\n<<<<<<< local\nL\n=======\nR\n>>>>>>> remote\n"; string(got.Content) != want {
		t.Fatalf("conflict: got %q, want %q", got.Content, want)
	}
}

// Git's rules, which TextStrict keeps: two insertions at one place
// conflict, at the end of a file and against an empty base alike.
func TestTextStrictConflictsOnConcurrentInsertions(t *testing.T) {
	base := lines("# Plan", "", "one", "two", "three", "four", "five")
	local := lines("# Plan", "", "one", "two", "three", "four", "five", "local")
	remote := lines("# Plan", "", "one", "two", "three", "four", "five", "remote")
	got := TextStrict(base, local, remote)
	want := lines("# Plan", "", "one", "two", "three", "four", "five",
		"<<<<<<< local", "local", "=======", "remote", ">>>>>>> remote")
	if !bytes.Equal(got.Content, want) || !equalRanges(got.Conflicts, []Range{{8, 12}}) {
		t.Fatalf("both append: got %q %v", got.Content, got.Conflicts)
	}
	local = lines("# Title", "shared", "mine")
	remote = lines("# Title", "shared", "theirs")
	got = TextStrict(nil, local, remote)
	want = lines("# Title", "shared", "<<<<<<< local", "mine", "=======", "theirs", ">>>>>>> remote")
	if !bytes.Equal(got.Content, want) || !equalRanges(got.Conflicts, []Range{{3, 7}}) {
		t.Fatalf("add/add: got %q %v", got.Content, got.Conflicts)
	}
}

func TestTextInvariants(t *testing.T) {
	g := newNoteGen(7)
	for i := range 300 {
		c := g.next(i)
		checkInvariants(t, c, Text)
		checkInvariants(t, c, TextStrict)
	}
}
