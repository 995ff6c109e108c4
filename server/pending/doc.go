// Package pending is a commit's pending publication as the engine keeps
// and adopts it (L6 of docs/local-state.md): the record P holds of each
// publication attempt (pstate.PendingRecord), read back on the next call
// and decided against `current`.
//
// Why it exists: a commit can be accepted by the store and then
// interrupted (killed, disk full) before L and the baseline A are
// updated. A then predates the accepted publication, and merge(A, L, R)
// would see the writer's own published lines as added on both sides — a
// conflict with itself as soon as L is edited next to them. So before each
// publication attempt the engine records the attempt's publication ID and
// its overlay: each path the scanned L changed relative to A, with L's
// file ID, and L's content where the merge text-merged it with others'
// changes (then the merged file minus that content is exactly the others'
// changes; that content is in no pack). The record keeps earlier accepted
// entries, so a second interrupted commit on top of an adopted one does
// not forget the first.
//
// Its map: Tracker (tracker.go) is what one call on one directory knows
// of the record, held by value in the call:
//   - Adopt reads the record once per call and, when `current` (or the
//     history since A, through History) holds an entry's publication,
//     returns A with the entry's overlay applied, in memory only; the
//     contents the overlay carries are then served by Content.
//   - Record writes the record for an attempt (the entry is built by the
//     commit's attempt in server/build from L's scan), keeping the
//     entries adopted before it.
//   - Accept, IfAccepted and AdoptAccepted carry this call's own accepted
//     publication until the call's rewrite or resynchronisation needs A
//     with it applied.
//   - Undecided names the version-4 call the record says may still be
//     accepted (a commit resumes it, a pull settles it); Forget removes
//     an entry a pull proved can never be; Recorded drops the record once
//     a baseline with another head is recorded.
//
// The invariant it owns: an accepted publication is common ground. A
// takes its overlay once per call, in memory, and only when `current` or
// the history since A proves the publication accepted. An undecided
// version-4 entry is kept while A is the base it was recorded on (a pull
// settles it before A moves on); an entry proved absent, a record whose
// base is not A's head, or one that cannot be read, is dropped. The
// record is a hint written without fsync: losing it only degrades to the
// conflict it exists to avoid, so a failure to remove or rewrite it is
// logged, never returned. Only the write before an attempt (Record) fails
// that attempt: a P that cannot hold the record could not record the
// baseline either, and nothing is published then.
//
// It must not import server or any engine package above server/dirstate:
// the engine hands it the directory's records (pstate.Dir), A
// (*dirstate.Baseline), an observed `current` and the history to read.
package pending
