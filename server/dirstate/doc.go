// Package dirstate is A and a directory's records in P as the engine
// holds them, and what a long-lived engine remembers of each visible
// directory L between calls.
//
// Its map:
//   - Baseline (baseline.go) is A as the engine holds it: P's record
//     (pstate.Baseline), A's files at the paths the ignore rules match
//     once learned, the memory it came from (Kept) and the file it was
//     prepared in while a commit published (pstate.Prepared). It always
//     travels by pointer: the memory tells one baseline from another by
//     identity, never by value.
//   - State (state.go) is one directory's records (pstate.Dir) with the
//     engine's hooks around its baseline: LoadBaseline, SaveBaseline and
//     InstallNextBaseline read and write P's file through the directory's
//     Memory; the streak (streak.go) is the directory's LIST-skip hint.
//   - Memories (memory.go) is what a long-lived engine keeps, one Memory
//     per directory (by its private state directory, at most 16): the
//     watched listings of L, the stat cache the last call left, the
//     baseline last read or written (Kept), and L's tree as the last call
//     left it when that was A (DeltaRef). A nil *Memories (a CLI process)
//     keeps nothing and every load reads P.
//
// The data flow: the engine takes a directory's Memory before the
// directory lock, loads the baseline through State under the lock (the
// Memory's copy when P's file is proved to be the one it was kept from,
// else P's), and hands the stat cache and the tree back to the Memory as
// the call ends.
//
// The invariant it owns: a kept value (baseline, stat cache, L's tree) is
// used only while P's file is proved, under the directory lock, to be the
// one it was kept from (its identity: size, times, inode; and the
// checksum that ends it); the memory is forgotten before P's file is
// replaced, and kept again only once the new file is in place. Any
// difference, or any doubt, reads P's copy as a fresh process would.
//
// It must not import server or any engine package above server/plan: the
// engine hands it values (the directory's records, the function that
// remembers the store) and calls it.
package dirstate
