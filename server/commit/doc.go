// Package commit is publishing a commit by format 4. It holds, so far,
// the checks a commit makes before its first write, what a commit sets
// going once its publication is accepted, and the options publish is run
// with; the rest of the commit (the engine's half of publish, the finish)
// is still in package server.
//
// Its map:
//   - The checks (checks.go, secrets.go), each a function of the call
//     (a server/dircall Call, with L scanned) returning a catalogued
//     error or nil: CheckMessage (the message's input rules, before the
//     call starts), RefuseMarkers (a file of L still holding a complete
//     conflict block), RefuseSecrets (a recognised credential in the
//     message, in a new name or in an added line: rules.Secrets over
//     server/secrets, the log naming where, never the match) and
//     RefuseReadOnly (a change outside the writable set or inside a
//     read-only one: the refused files are reset to A by a pull's
//     rewrite of L, pull.Materialise, and then reported).
//   - Background (background.go) is the engine's work left after an
//     accepted commit, one value per engine, set up once by server.New
//     with what the work reads: the notebook, the object caches, the
//     logger, the retention by time, the checkpoint interval, the
//     window's K and M, and the engine's catch-up (Sync). The engine's
//     Close waits for it (Wait).
//   - StartSweep and Sweep (cleanup.go): the rule that picks the
//     generations whose commit sweeps the store's decided garbage and the
//     history below the floor (remote.CleanupV4), and the sweep, one at a
//     time per engine.
//   - StartRollups (checkpoint.go): the rollups a generation ends and
//     the checkpoint it is due for, built from the caches caught up to
//     the accepted state (objcache.Caches.BuildRollups), one build at a
//     time per engine.
//   - Options (options.go): publish.Options for the engine's store: its
//     clock (the engine's configured Sleep and Now, or the wall clock)
//     and the estimates of a conditional write and a round trip, a store
//     on this machine's when none is configured.
//
// The data flow: the engine runs the checks in that order, once L is
// scanned and before anything of the commit is written; the commit's
// finish hands the accepted state and its
// generation to StartSweep and StartRollups; each returns at once and,
// when the generation is due for its work, runs it on a goroutine with a
// timeout of its own, detached from the call. Their outcome is only
// logged: the commit's result never waits for them, never fails because
// of them, and accepted state never depends on them.
//
// The invariants it owns (these parts of them): nothing a commit refuses
// is changed. Every check runs before the commit's first write and reads
// only (L as scanned, A, the object caches; the read-only check also
// reads `current` and syncs the caches to it), so a refused commit
// publishes nothing, leaves A as it was and writes no file of L, save the
// documented reset of the files refused for a read-only path, which
// brings exactly those back to A and keeps every other local edit. And
// once a publication is
// accepted, the background work it starts (rollups and checkpoints, one
// build at a time; a sweep, one at a time, at the generations the rule
// picks) only ever reads what the accepted state reaches and deletes only
// what that state's retention rules no longer name (docs/storage.md's
// sweep rules); Close waits for it.
//
// It must not import server or any engine package above it: the engine
// hands it the call (server/dircall), values, and its catch-up and its
// rewrite of L as funcs.
package commit
