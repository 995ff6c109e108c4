package main

import (
	"maps"
	"strconv"
	"strings"
	"testing"
)

// lines returns "l1\n".."ln\n" with the given replacements (1-based).
func lines(n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r)
		} else {
			b.WriteString("l" + strconv.Itoa(i))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Two directories with their own private roots edit one notebook: disjoint
// edits (other lines of one file, other files) both commit, and both end
// with everything.
func TestCLITwoWritersDisjoint(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		a.pull()
		a.write("shared.md", lines(20, nil))
		a.commit("base")
		b.pull()

		a.write("shared.md", lines(20, map[int]string{2: "a edits two"}))
		a.write("a-only.md", "from a\n")
		b.write("shared.md", lines(20, map[int]string{18: "b edits eighteen"}))
		b.write("b-only.md", "from b\n")

		if r := a.commit("a's edit"); r.generation != 2 {
			t.Fatalf("a: %+v", r)
		}
		r := b.commit("b's edit")
		// The increment is b's own change over the accepted parent.
		if r.generation != 3 || r.files["shared.md"] != [2]int{1, 1} || r.files["b-only.md"] != [2]int{1, 0} || len(r.files) != 2 {
			t.Fatalf("b: %+v", r)
		}
		want := map[string]string{
			"shared.md": lines(20, map[int]string{2: "a edits two", 18: "b edits eighteen"}),
			"a-only.md": "from a\n",
			"b-only.md": "from b\n",
		}
		if got := b.files(); !maps.Equal(got, want) {
			t.Fatalf("b after commit: %q", got)
		}
		if r := a.pull(); r.generation != 3 {
			t.Fatalf("a pull: %+v", r)
		}
		if got := a.files(); !maps.Equal(got, want) {
			t.Fatalf("a after pull: %q", got)
		}
	})
}

// Overlapping edits: the second commit writes conflict blocks with exact
// ranges into its directory and publishes nothing; committing the blocks
// unresolved is refused with the same ranges; resolving them commits.
func TestCLITwoWritersConflict(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		a.pull()
		a.write("notes.md", lines(10, nil))
		a.commit("base")
		b.pull()

		a.write("notes.md", lines(10, map[int]string{5: "a's five"}))
		a.commit("a wins")
		b.write("notes.md", lines(10, map[int]string{5: "b's five"}))
		accepted := a.files()

		rep := mustFail(t, b.run("commit", b.dir, "-m", "b loses"))
		if rep.code != "CONTENT_CONFLICT" || rep.reason != "MERGE_CONFLICT" || rep.action != "EDIT_FILES" || rep.retryable {
			t.Fatalf("conflict report: %+v", rep)
		}
		// Lines 1-4 stay, then the block: marker, b's line, separator, a's line, marker.
		f, ok := rep.file("notes.md")
		if !ok || f.reason != "TEXT_CONFLICT" || f.ranges != "5-9" || len(rep.files) != 1 {
			t.Fatalf("conflict files: %+v", rep.files)
		}
		wantBlocks := lines(4, nil) + "<<<<<<< local\nb's five\n=======\na's five\n>>>>>>> remote\n" + strings.TrimPrefix(lines(10, nil), lines(5, nil))
		if got := b.read("notes.md"); got != wantBlocks {
			t.Fatalf("b's file:\n%s\nwant:\n%s", got, wantBlocks)
		}
		obs := nb.agent("observer")
		if r := obs.pull(); r.generation != 2 || !maps.Equal(obs.files(), accepted) {
			t.Fatalf("the remote changed after a conflict: %+v %q", r, obs.files())
		}

		rep = mustFail(t, b.run("commit", b.dir, "-m", "blocks"))
		if f, ok := rep.file("notes.md"); rep.code != "CONTENT_CONFLICT" || rep.reason != "UNRESOLVED_MARKERS" || !ok || f.reason != "CONFLICT_MARKERS" || f.ranges != "5-9" {
			t.Fatalf("unresolved blocks: %+v", rep)
		}

		resolved := lines(10, map[int]string{5: "both fives"})
		b.write("notes.md", resolved)
		if r := b.commit("resolved"); r.generation != 3 || r.files["notes.md"] != [2]int{1, 1} {
			t.Fatalf("resolved commit: %+v", r)
		}
		obs.pull()
		if got := obs.read("notes.md"); got != resolved {
			t.Fatalf("observer: %q", got)
		}
	})
}
