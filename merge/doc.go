// Package merge is the notebook's three-way merge: a line-level diff3 of one
// file's three versions, a scanner for the conflict blocks it writes, the
// per-path merge of three whole trees, and the diffstat.
//
// Data flow of a text merge (Text, text.go):
//
//	base, local, remote []byte
//	  -> lines (runs ending in LF; the last may lack it) interned to int32
//	     symbols, one table for all three files, so equal lines are equal
//	     ints (lines.go)
//	  -> diff(base, local) and diff(base, remote) (diff.go): common prefix
//	     and suffix trimmed; the lines that the other file does not have
//	     marked changed; the rest, one rune per distinct line, diffed by
//	     github.com/sergi/go-diff (DiffMainRunes, no deadline, so the same
//	     inputs always give the same diff), long ones first cut at lines
//	     that each side has once (split.go); then every run of changed
//	     lines placed by rule 1 (place.go)
//	  -> regions: the hunks of both sides walked in base order, each hunk
//	     grouped with every hunk of the other side it overlaps or touches;
//	     one side's region is taken, equal sides once, anything else is a
//	     conflict
//	  -> conflicts refined (local and remote diffed against each other, the
//	     common lines moved out), then joined again when only a few lines,
//	     or lines without a letter or digit, separate them
//	  -> output with local as the skeleton, and the line range of every
//	     conflict block.
//
// Nothing is ever normalised: a CR before an LF is part of the line.
//
// # The rules, and how each is met
//
// DESIGN §4 lists what `git merge-file -L local -L base -L remote` (git
// 2.39) does; this package is written from those rules and from observing
// git's output, not from git's source. TextStrict follows rules 1-5; Text
// adds rule 6, the notebook's own.
//
//  1. Hunk placement: place moves each run of changed lines as high as it
//     can, then as low, merging runs it meets, and leaves it at the bottom
//     unless its end lined up with a change of the other file on the way,
//     then at the lowest such place. Deletions are placed before
//     insertions.
//  2. Adjacency: regions groups a hunk with the other side's hunks that
//     start at or before its end, so only an unchanged base line between
//     two changes keeps them apart.
//  3. Identical changes: a region whose two sides have the same lines is
//     written once; so is a conflict whose sides are equal after
//     refinement, or after its refined pieces are joined again (join).
//  4. Refinement: refine diffs a conflict's two sides with the same line
//     diff; join merges blocks that at most 3 lines, or lines without an
//     ASCII letter or digit, separate.
//  5. No final newline: the output is taken from the inputs' lines, so a
//     clean merge ends as the text it ends with; in a block, a side whose
//     last line lacks LF gets one, and markers end in CRLF when local's
//     and remote's line before the block and base's first line do
//     (markerCRLF).
//  6. Concurrent additions (Text only): a region where both sides only
//     inserted lines at one base position is clean, remote's lines first,
//     then local's; equal runs once, and a run that starts or ends the
//     other side's run is not written again (writer.additions). Appending
//     to a base whose last line lacks LF gives that line an LF on both
//     sides; that alone does not count as changing it. The rule is applied
//     after rules 1-5 have merged (merge3): where those found a stretch
//     clean because its refined pieces agree (the two diffs of base placed
//     one identical change differently), its insertions are not written
//     twice. So base "a", local "a L", remote "a R" (one line each) merge
//     to "a R L", clean; base "a b", local "a b new", remote "a B" still
//     conflict, as "new" touches the changed "b".
//
// # Where go-diff chooses differently from git
//
// Among equally short diffs (which blank line of several a kept blank line
// matches, say), go-diff's bisection chooses differently from git's diff.
// That decides which hunks of the two sides touch, so it can turn a clean
// merge into a conflict or the reverse, and it shapes conflict blocks.
// Leaving the lines only one file has out of go-diff's input brings its
// choices closer to git's: on 1,500 generated merges, blocks the same as
// git's went from 90.6% to 94.1%, with clean merges unchanged; trimming the
// common ends before go-diff rather than inside it (where its clean-up may
// shift an edit into them) took that to 95.1%. Measured by
// TestDifferentialAgainstGit with TextStrict (3,000 seeded note merges per
// seed, seeds 20261130 and 1-3): of git's clean merges 99.85-99.93% are
// clean here with the same bytes, the rest conflict here (an identical
// edit that the two diffs of base align differently, next to another
// edit); git conflicts and the merge here is clean in 0-0.20% of all
// cases, nearly all where git writes a block whose two sides are the same
// lines (rule 3 takes them once), the others where the two diffs here line
// the sides up so that they come out equal; 95.1-96.2% of git's conflicts
// have the same blocks here.
//
// Cost. go-diff has no cost limit without a deadline: its search costs
// the size times the number of differences, so two long versions that
// differ a lot would take minutes (a 1 MB note with its 200-line blocks
// moved: 4.9 s). Above 2,048 runes a diff is therefore cut at the lines
// each side has once, their longest in-order run (patience sorting), and
// go-diff diffs the pieces, each without the lines the other side's piece
// lacks (a moved block); with no such line, the two halves. A long note
// with scattered edits gets the diff go-diff makes of the whole (the
// unique lines match in it anyway); the reorganised note takes 0.06-0.12 s
// in merge-file, git 0.10-0.38 s on the same loaded machine; heavy rewrites of a few repeated lines get a valid but
// not minimal diff, as git's own cost limits give (the verdict agrees with
// git's in TestDifferentialLargeRewrites, the bytes only for light
// rewrites).
//
// Memory: merge-file runs Text once in a short process without the garbage
// collector, so every byte allocated is a fresh page to fault in; lines
// keep their per-line state in int32 and bytes, and the differ reuses its
// scratch memory across the diffs of one merge (bench/merge_text_test.go).
//
// Trees merges three complete trees path by path (tree.go documents the
// cases); Stat and CountLines give the diffstat.
package merge
