package main

import (
	"maps"
	"strings"
	"testing"
)

// fileStats maps files[].path to [insertions, deletions].
func fileStats(r result) map[string][2]int {
	out := map[string][2]int{}
	for _, f := range r.files() {
		out[f["path"].(string)] = [2]int{int(f["insertions"].(float64)), int(f["deletions"].(float64))}
	}
	return out
}

func generation(r result) uint64 { return uint64(r.s["generation"].(float64)) }

// Two servers, each with its own directory and private root, on one store:
// disjoint edits both commit through MCP and both end with everything.
func TestMCPTwoServersDisjoint(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		sa, sb := a.serve(), b.serve()
		sa.pull()
		a.write("shared.md", lines(20, nil))
		sa.commit("base")
		sb.pull()

		a.write("shared.md", lines(20, map[int]string{2: "a edits two"}))
		a.write("a-only.md", "from a\n")
		b.write("shared.md", lines(20, map[int]string{18: "b edits eighteen"}))
		b.write("b-only.md", "from b\n")

		if r := sa.commit("a's edit"); generation(r) != 2 {
			t.Fatalf("a: %s", r.raw)
		}
		r := sb.commit("b's edit")
		// The increment is b's own change over the accepted parent, and the
		// totals agree with the files.
		st := fileStats(r)
		if generation(r) != 3 || len(st) != 2 || st["shared.md"] != [2]int{1, 1} || st["b-only.md"] != [2]int{1, 0} ||
			r.s["filesChanged"] != float64(2) || r.s["insertions"] != float64(2) || r.s["deletions"] != float64(1) {
			t.Fatalf("b: %s", r.raw)
		}
		if r.text != b.dir || r.str("path") != b.dir {
			t.Fatalf("b's result names %q / %q, want its directory %s", r.text, r.str("path"), b.dir)
		}
		want := map[string]string{
			"shared.md": lines(20, map[int]string{2: "a edits two", 18: "b edits eighteen"}),
			"a-only.md": "from a\n",
			"b-only.md": "from b\n",
		}
		if got := b.files(); !maps.Equal(got, want) {
			t.Fatalf("b after commit: %q", got)
		}
		if r := sa.pull(); generation(r) != 3 {
			t.Fatalf("a pull: %s", r.raw)
		} else if st := fileStats(r); len(st) != 2 || st["shared.md"] != [2]int{1, 1} || st["b-only.md"] != [2]int{1, 0} {
			t.Fatalf("a's pull diffstat is the on-disk delta: %s", r.raw)
		}
		if got := a.files(); !maps.Equal(got, want) {
			t.Fatalf("a after pull: %q", got)
		}
		// A no-op synchronisation reports no files.
		if r := sa.pull(); generation(r) != 3 || len(r.files()) != 0 || r.s["filesChanged"] != float64(0) {
			t.Fatalf("no-op pull: %s", r.raw)
		}
	})
}

// Overlapping edits through MCP: the second commit gets conflict blocks
// with exact ranges and publishes nothing; unresolved blocks are refused;
// resolving them commits.
func TestMCPTwoServersConflict(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		sa, sb := a.serve(), b.serve()
		sa.pull()
		a.write("notes.md", lines(10, nil))
		sa.commit("base")
		sb.pull()

		a.write("notes.md", lines(10, map[int]string{5: "a's five"}))
		sa.commit("a wins")
		b.write("notes.md", lines(10, map[int]string{5: "b's five"}))
		accepted := a.files()

		r := sb.call(ToolCommitName, map[string]any{"message": "b loses"})
		wantError(t, r, "CONTENT_CONFLICT", "MERGE_CONFLICT", "EDIT_FILES", false)
		if rs := fileRanges(r); len(rs) != 1 || len(rs["notes.md"]) != 1 || rs["notes.md"][0] != [2]int{5, 9} {
			t.Fatalf("ranges: %s", r.raw)
		}
		if !strings.Contains(r.text, "\nfile: notes.md · TEXT_CONFLICT · lines 5-9\n") {
			t.Fatalf("text item:\n%s", r.text)
		}
		wantBlocks := lines(4, nil) + "<<<<<<< local\nb's five\n=======\na's five\n>>>>>>> remote\n" + strings.TrimPrefix(lines(10, nil), lines(5, nil))
		if got := b.read("notes.md"); got != wantBlocks {
			t.Fatalf("b's file:\n%s\nwant:\n%s", got, wantBlocks)
		}
		obs := nb.agent("observer").serve()
		if r := obs.pull(); generation(r) != 2 || !maps.Equal(obs.a.files(), accepted) {
			t.Fatalf("the remote changed after a conflict: %s %q", r.raw, obs.a.files())
		}

		r = sb.call(ToolCommitName, map[string]any{"message": "blocks"})
		wantError(t, r, "CONTENT_CONFLICT", "UNRESOLVED_MARKERS", "EDIT_FILES", false)
		if rs := fileRanges(r); rs["notes.md"] == nil || rs["notes.md"][0] != [2]int{5, 9} || fileReasons(r)["notes.md"] != "CONFLICT_MARKERS" {
			t.Fatalf("unresolved: %s", r.raw)
		}

		resolved := lines(10, map[int]string{5: "both fives"})
		b.write("notes.md", resolved)
		if r := sb.commit("resolved"); generation(r) != 3 || fileStats(r)["notes.md"] != [2]int{1, 1} {
			t.Fatalf("resolved commit: %s", r.raw)
		}
		obs.pull()
		if got := obs.a.read("notes.md"); got != resolved {
			t.Fatalf("observer: %q", got)
		}
	})
}
