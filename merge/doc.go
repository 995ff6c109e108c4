// Package merge is the notebook's three-way merge: a line-level diff3 of one
// file's three versions, a scanner for the conflict blocks it writes, the
// per-path merge of three whole trees, and the diffstat.
//
// Data flow of a text merge (Text):
//
//	base, local, remote []byte
//	  -> lines (runs ending in LF; the last may lack it) interned to int32
//	     symbols, one table for all three files, so equal lines are equal ints
//	  -> diff(base, local) and diff(base, remote): common prefix and suffix
//	     trimmed, the middle diffed by sergi/go-diff on the symbols (one rune
//	     per line, no timeout, hence deterministic), then compacted: each run
//	     of changed lines is slid down as far as it goes unless it can line
//	     up with a change of the other file (git's xdl_change_compact)
//	  -> hunks of both sides walked in base order: separated hunks are taken,
//	     identical ones once, touching or overlapping ones become a conflict
//	  -> conflicts refined (local and remote diffed against each other, the
//	     common lines moved out), then joined again when only a few lines, or
//	     lines without a letter or digit, separate them
//	  -> output with local as the skeleton, and the line range of every
//	     conflict block written.
//
// The behaviour reproduces git 2.39's `git merge-file -L local -L base -L
// remote` (level "zealous alnum", style "merge"); DESIGN §4 lists the rules
// and merge/differential_test.go measures the agreement. Nothing is ever
// normalised: a CR before an LF is part of the line.
//
// Trees merges three complete trees path by path (tree.go documents the
// cases); Stat and CountLines give the diffstat.
package merge
