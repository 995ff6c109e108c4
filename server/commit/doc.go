// Package commit is publishing a commit by format 4: the checks a commit
// makes before its first write, the engine's half of package publish (the
// build of each version and the objects of the fold), the finish that
// brings L and A to the accepted generation's tree, a pull's settling of
// a call interrupted after it registered, and the work an accepted
// commit leaves to the background.
//
// Its map:
//   - Publishing (publish.go) is what the engine hands every commit,
//     made once by server.New and never changed after: the call's
//     environment (server/dircall's Env), publish's options (Options,
//     options.go: its clock and the estimates a store on this machine
//     starts from), the store's learned estimates (storeview.Timing) and
//     the Background.
//   - Run (run.go) is one commit on a call (server/dircall's Call, its
//     locks taken, A loaded): a lost or missing baseline refused, L
//     opened, an interrupted call resynchronised first (pull.RecoverFirst:
//     recovery comes before anything else), L scanned, then the checks in
//     a fixed order, then the publication. The checks (checks.go,
//     secrets.go) each read only and return a catalogued error or nil:
//     CheckMessage (the message's input rules, run by the engine before
//     the call starts), refuseMarkers (a file of L still holding a
//     complete conflict block), refuseSecrets (a recognised credential in
//     the message, in a new name or in an added line: rules.Secrets over
//     server/secrets, the log naming where, never the match) and
//     refuseReadOnly (a change outside the writable set or inside a
//     read-only one: the refused files are reset to A by a pull's
//     rewrite of L, pull.Materialise, and then reported).
//   - The publication (publish.go) runs publish's protocol under a
//     publication ID, new or the one the pending record names (then the
//     earlier call is resumed, Publisher.Resume). publish calls back
//     the build (a server/build Attempt on the state publish read; the
//     version is handed to publish only once its pending record is in
//     P, and the baseline accepting it would record is prepared from
//     then on, while the version is registered) and the objects (the caches caught up to a state, refilled on a
//     miss with the packs of the window's generations). Its outcome is
//     finished by finishV4 (accepted: L and A brought to the accepted
//     generation's tree, the pack kept in the cache, the background work
//     started; a long-lived engine keeps the pack and starts that work
//     after its reply, through Publishing.Later, and its next call
//     waits for both before it begins), finishUnchanged (the merge was the state read: L brought
//     to it, nothing published), materialiseConflict (the merge
//     conflicts: the blocks written into L, A recording the state read)
//     or resumedV4 (an earlier call found accepted: L synchronised with
//     it, then what L holds beyond it published as a call of its own).
//   - SettleV4 (settle.go): a pull, before anything else, finishes the
//     undecided call the pending record names without building a new
//     version: accepted (found, or folded now), or no longer foldable
//     (the entry forgotten, its text left in L as a local edit).
//   - Background (background.go) is the engine's work left after an
//     accepted commit, one value per engine: StartRollups (checkpoint.go,
//     the rollups a generation ends and the checkpoint it is due for,
//     one build at a time) and StartSweep and Sweep (cleanup.go, the
//     rule that picks the generations whose commit sweeps the store's
//     decided garbage and the history below the floor, one sweep at a
//     time). The engine's Close waits for it (Wait).
//
// The data flow: the engine begins the call (its locks, A) and hands it
// to Run with the Publishing; Run checks, publishes through publish, and
// finishes through server/pull's Materialise (the rewrite of L under the
// recovery flag; a failure once L may have changed becomes
// RECOVERY_FAILURE after one resynchronisation), returning the call's
// dircall.Result. The finish hands the accepted state and its generation
// to the Background, whose work runs on goroutines of its own with
// timeouts of their own, detached from the call; its outcome is only
// logged.
//
// The invariants it owns. Nothing a commit refuses is changed: every
// check runs before the commit's first write and reads only (L as
// scanned, A, the object caches; the read-only check also reads
// `current` and syncs the caches to it), save the documented reset of
// the files refused for a read-only path, which brings exactly those back
// to A and keeps every other local edit. A publication ID is accepted at
// most once: every version of a call is registered under one ID, and a
// call the pending record names is resumed under its ID (by the next
// commit, or settled by the next pull) instead of published anew. Once
// accepted, L and A are brought to that generation's tree whatever the
// caller's context (the call's context is detached from then on). The
// work left after acceptance (rollups, checkpoints, sweeps) never
// decides acceptance: it starts after it, reads only what the accepted
// state reaches, deletes only what that state's retention rules no
// longer name, and the commit's result never waits for it.
//
// It must not import server: the engine hands it the call, the
// Publishing and values; it calls down into server/build, server/pull,
// server/rewrite and server/dircall, never back into the engine.
package commit
