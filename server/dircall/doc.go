// Package dircall is one call of the engine on one visible directory L:
// what the engine lends every call (Env) and the call itself (Call): its
// locks, A, the scan of L, the object source and where a file ID's
// content is found.
//
// Its map:
//   - Env (env.go) is the engine's part every call uses, built once when
//     the engine is made: the store as the engine reads it, the notebook
//     over it, the object caches, the content a long-lived engine's commits
//     published, which store it is, the probe's verdict, the ignore rules,
//     the writable and read-only sets, whether credentials are refused,
//     the workspace L is opened in (OpenL), and what a long-lived engine
//     remembers of each directory. Its
//     methods are the engine's one mapping of failures to the catalogue
//     (Fail, MapErr, Sync, PackFailure, StoreTrouble) and the
//     history.Engine a history.View reads through (History).
//   - Call (call.go) is one call: Open takes the engine's in-process
//     mutex of the directory and the lock file in P, loads A (Base; nil
//     when never pulled, Lost when it is gone) and the stat cache, and
//     gives the call its view of the pending record (Pending, a
//     server/pending Tracker, which reads P only when asked); End hands
//     the stat cache (once recorded) and L's tree back to the
//     directory's memory (memory.go), closes L and releases the locks.
//     Between them: OpenL, ScanL and Scan (scan.go: L under the engine's
//     rules, with A's files at the paths L ignores), BaseDelta (L's delta
//     from A, once per call), Load (a file ID's content: an adopted base,
//     a held base, the scan, the recent commits, the object source, L
//     re-read, or the store again, basefetch.go), MergeWith and Plan
//     (plan.go, over server/plan), DropOutlivedRecord (remembered.go).
//   - Result and FileStat (result.go) are what a pull or a commit
//     returns; Diffstat and TreeDelta compute its per-file line deltas.
//   - The refusals a call owns (refusals.go): a lost baseline
//     (BaselineLost), a record the store outlived (OutlivedRecord,
//     reached from ErrRecordNewer through MapErr) and a request path the
//     workspace rules refuse (PathErr, which the engine's ResolveDir
//     uses too).
//
// The data flow: the engine resolves the request, proves the store and
// takes the directory's memory, then Open; a pull or commit scans L,
// syncs the object cache (Src), merges and plans through the Call, and
// ends it with End, whatever happened.
//
// The invariants it owns: every content a call hands out is what its ID
// says (a file of L re-read is rehashed; content the scan read is kept
// by ID), and a base gone from cache and store is refused as
// BASELINE_LOST (the baseline set aside), never guessed. Every failure
// leaves a call as a catalogued error (server/diag), and an unexpected
// store error makes the engine forget the probe's verdict before it is
// reported, so the next call (in any process) proves the store again.
//
// It must not import server: the engine builds an Env and hands it down
// with the directory's records; nothing here climbs back.
package dircall
