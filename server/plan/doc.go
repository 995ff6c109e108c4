// Package plan computes the change a call makes to L, the visible
// directory: given the baseline A (pstate.Baseline), the tree L a scan
// read, the tree R of the accepted notebook and the objects' contents, it
// merges them and says which files to write, remove and keep, with the old
// and new content of each and the diffstat. It never touches L: the engine
// (package server) runs the call (its locks, the recovery flag and the
// rewrite record, in that order) and hands the plan to server/workdir to
// write.
//
// Map:
//
//	Merge (merge.go)        A, L and R merged by path (merge.Trees), the
//	                        paths whose base is unknown decided instead of
//	                        merged; Merged is the result: each path's file
//	                        ID, the contents the merge produced, conflicts
//	Changes (changes.go)    Merged against L: each Change with its old and
//	                        new content, loaded before anything is written
//	LeaveIgnored, Restore   the plan without the paths the ignore rules
//	                        match, and with the withheld files a removed
//	                        rule lets into L again
//	unknown.go              bases unknown after a crash or without a
//	                        record: UnknownBase, WithUnknown,
//	                        UnknownPaths, and the one conflict block that
//	                        holds both texts
//	ignore.go               the ignore state: AddVirtual puts A's files at
//	                        ignored paths into the scan's tree ("virtual"
//	                        entries); the withheld record in P, which
//	                        AddVirtual reads and SaveWithheld writes
//
// Data flow:
//
//	scan of L ─AddVirtual─▶ L with A's files at ignored paths
//	A, L, R ─Merge─▶ Merged ─Changes─▶ []Change ─LeaveIgnored, Restore─▶
//	         the plan, handed to the engine's rewrite (server/workdir)
//
// The invariant it owns: a plan never loses a line. Every path of A, L and
// R is either kept, written with its merged content (conflict blocks where
// the merge conflicts), or removed because one side removed it and the
// other did not change it. A path the ignore rules match is never written,
// overwritten or removed in L. A path whose base is unknown is never
// merged as if its base were known: L's file equal to the notebook's is
// adopted, a file only one side has is kept, and two different texts are
// kept whole in one conflict block (reason diag.NoRecord).
//
// It builds on cas, merge, server/workdir (the ignore rules, the stat
// cache), server/pstate (the baseline, the files of P) and, for the one
// file reason it writes (NO_RECORD), the catalogue in server/diag. It
// imports nothing of the engine (package server): it returns plain values
// and errors, and the engine maps them.
package plan
