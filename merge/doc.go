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
//	  -> lineDiff(base, local) and lineDiff(base, remote) (diff.go): the
//	     lines both start and end with set aside; the lines that the other
//	     file does not have marked changed; the rest, one rune per
//	     distinct line, diffed by github.com/sergi/go-diff (DiffMainRunes,
//	     no deadline, so the same inputs always give the same diff), long
//	     ones first cut at lines that each side has once (split.go); then
//	     every run of changed lines placed (slide.go); the result is a
//	     list of changes, old lines [lo, hi) replaced by new lines [lo, hi)
//	  -> regions (segments.go): the changes of both sides walked in base
//	     order, each joined with every change of the other side it overlaps
//	     or touches; a region changed by one side takes that side's lines,
//	     one changed alike by both is taken once, one where both only
//	     added lines is merged by the rules for additions (additions.go,
//	     Text only), anything else conflicts
//	  -> segments: stretches that tile local's and remote's lines in
//	     order (lines both have, one side's change, both additions, a
//	     conflict); a conflict is cut into the lines its two sides share
//	     and the pieces where they differ, then pieces that few or bare
//	     lines separate are joined into one block
//	  -> output (output.go): the segments' bytes, marker lines around each
//	     block, and the line range of every block.
//
// Nothing is ever normalised: a CR before an LF is part of the line.
//
// # The rules, and how each is met
//
// The reference for verdicts and clean results is `git merge-file -L local
// -L base -L remote` (git 2.39); this package is written from the rules
// below and from observing git's output, never from git's source. Rules
// 1-5 are git's, and TextStrict follows them; Text adds 6 and 7, the
// notebook's own.
//
//  1. Placement: a run of changed lines whose last line equals the line
//     after it could as well sit one line lower. slide moves each run as
//     high as it goes, then as low, joining runs it meets, and leaves it
//     at the lowest place where the other file of the diff changes lines
//     too (a replacement stays in one piece), or else at the bottom. The
//     old file's runs are placed first, then the new file's.
//  2. Adjacency: regions joins a change to the region being built when it
//     starts at or before the region's end, so only a base line neither
//     side changed keeps two sides' changes apart; an insertion next to a
//     line the other side changed conflicts.
//  3. Identical changes: a region whose two sides wrote the same lines is
//     written once, whatever the diffs of each side look like inside it.
//  4. Refinement: a conflict's two sides are diffed against each other
//     like any two versions; the lines they share are written once,
//     outside any block, and each piece where they differ is a block.
//     join then merges consecutive blocks that at most three shared lines,
//     or shared lines without an ASCII letter or digit, separate (blank
//     lines, rules, fences, braces); a clean change of one side between
//     them keeps them apart. This shapes blocks, never the verdict.
//  5. Line ends: a clean merge ends as the text it ends with. Marker lines
//     end in CRLF when base's first line does and, on each side, the line
//     before the block (the block's first line at the top of the file)
//     does or has no line end at all; otherwise in LF. Inside a block, and
//     between two runs of added lines, a last line without LF gets that
//     same line end.
//  6. Concurrent additions (Text only): a region where both sides only
//     added lines at one base position is clean: remote's lines, then
//     local's; when one side's lines are a contiguous run of the other's,
//     the longer once. Appending to a base whose last line lacks LF ends
//     that line on both sides first; when both ended it alike, that
//     counts as adding only. A replaced or deleted line touching the other
//     side's change still conflicts (rule 2).
//  7. Shared additions (Text only): in such a region, and when both sides
//     add a file at one path (empty base), the lines both additions start
//     with and those both end with are written once, and rule 6 applies to
//     what lies between. Two agents creating log.md as "# Log", "- started",
//     "- a" and "# Log", "- started", "- b" get "# Log", "- started",
//     remote's line, local's line. A blank line both sides start their
//     addition with is a shared line too: two appended paragraphs come out
//     as one blank line, remote's paragraph, local's paragraph.
//
// Where TextStrict is clean, Text gives the same bytes: rules 6 and 7 only
// decide regions that rules 1-5 make conflicts.
//
// # When go-diff's choice makes changes touch
//
// Among equally short diffs (which of two blank lines an added block
// matches, say), go-diff's bisection picks differently from git's diff,
// and its pick for one side can depend on edits far away. When the pick
// makes two sides' changes touch where another equally short diff keeps
// them apart, the merge here prefers the one that keeps them apart
// (untangle in segments.go): a cluster of regions that conflicts, together
// with the regions at most three unchanged base lines away, is diffed again
// on its own for each side, from the start and from the end
// (lineDiffFromEnd); the pairs of those diffs that change no more lines
// than the first ones are tried in turn, and the first that leaves the
// cluster without a conflict is used. Clean stays clean; the rule only
// turns conflicts into clean merges that a shortest diff of each side
// supports. Text tries it by rules 1-5 first, on a cluster those rules
// conflict on even where rules 6 and 7 would make the first diffs clean,
// and by its own rules only after: otherwise Text could keep touching
// additions that TextStrict untangles into other bytes.
//
// Measured by TestDifferentialAgainstGit with TextStrict (3,000 seeded note
// merges per seed, seeds 20261130 and 1-3): of git's clean merges
// 99.93-100% are clean here with the same bytes (99.58-99.86% without the
// rule above), the rest conflict here; git conflicts and the merge here is
// clean in 0.07-0.30% of all cases, each clean under shortest diffs of both
// sides (mostly where git's two diffs placed one identical edit
// differently); 94.6-95.7% of git's conflicts have the same blocks here,
// and where both conflict, the lines inside blocks are no more than git's
// in 98.4-98.9% of the cases (seed 20261130: fewer in 53, as many in
// 1,569, more in 23 of 1,645). On real merges (TestDifferentialCorpus: 560
// Markdown files that both parents of a merge commit changed, from the
// histories of rust-lang/book, rust-lang/reference and
// rust-lang/rust-by-example), all 444 of git's clean merges give its bytes,
// none of its 116 conflicts is clean here, and 110 have the same blocks.
// The frozen cases of testdata/git, generated and hand-written, give git's
// bytes exactly, blocks included.
//
// Cost. go-diff has no cost limit without a deadline: its search costs
// the size times the number of differences, so two long versions that
// differ a lot would take minutes. Above 2,048 runes a diff is therefore
// cut at the lines each side has once, their longest in-order run
// (patience sorting), and go-diff diffs the pieces, each without the lines
// the other side's piece lacks (a moved block); with no such line, the two
// halves. A long note with scattered edits gets the diff go-diff makes of
// the whole (the unique lines match in it anyway); heavy rewrites of a few
// repeated lines get a valid but not minimal diff, as git's own cost limits
// give (the verdict agrees with git's in TestDifferentialLargeRewrites, the
// bytes only for light rewrites). untangle only diffs clusters that
// conflict, each on its own.
//
// Memory: merge-file runs Text once in a short process without the garbage
// collector, so every byte allocated is a fresh page to fault in, and every
// copy an append leaves behind stays. Lines keep their per-line state in
// int32 and bytes, the differ reuses its scratch memory across the diffs of
// one merge, and slices whose size is known or bounded (regions, segments,
// changes, a side's runs) are sized once; capacity never written is never
// resident.
//
// Against git merge-file, whole processes on one loaded 2-core machine
// (BenchmarkMergeFileProcess, medians of 15 alternated runs, CPU time net
// of each program's start-up, paired run by run): 100 KB note, 100 edited
// lines per side, 0.76x git; 1 MB, 0.50x; 5 MB, 0.40x; 5 MB with 10,000
// edited lines per side, 0.43x (wall time 0.58x), with a peak of 54.2 MB
// resident against git's 62.0 MB.
//
// Trees merges three complete trees path by path (tree.go documents the
// cases); Stat and CountLines give the diffstat.
package merge
