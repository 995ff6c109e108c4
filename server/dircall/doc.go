// Package dircall is one call of the engine on one visible directory L:
// what the engine lends the call (Env) and, for the call itself, its
// locks, A, the scan of L, the object source and where a file ID's
// content is found.
//
// Its map:
//   - Env (env.go) is the engine's part every call uses, built once when
//     the engine is made: the store as the engine reads it, the notebook
//     over it, the object caches, the content a long-lived engine's commits
//     published, which store it is, the probe's verdict, the ignore rules,
//     the writable and read-only sets and whether credentials are
//     refused. Its methods are the engine's one mapping of failures to
//     the catalogue (Fail, MapErr, Sync, PackFailure, StoreTrouble) and
//     the history.Engine a history.View reads through (History).
//   - Result and FileStat (result.go) are what a pull or a commit
//     returns; Diffstat and TreeDelta compute its per-file line deltas.
//   - The refusals a call owns (refusals.go): a lost baseline
//     (BaselineLost) and a record the store outlived (OutlivedRecord,
//     reached from ErrRecordNewer through MapErr).
//
// The invariant it owns: every failure leaves a call as a catalogued
// error (server/diag), and an unexpected store error makes the engine
// forget the probe's verdict before it is reported, so the next call (in
// any process) proves the store again.
//
// It must not import server: the engine builds an Env and hands it down;
// nothing here climbs back.
package dircall
