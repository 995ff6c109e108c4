// Package build is one version of a commit's change, built on one
// observed `current` (the attempt): what publish registers as a proposal.
// publish calls the engine's build once per version it registers (again
// after a fold declines one, or when the window passed it); each call
// makes a new Attempt, so nothing leaks from one version into the next.
//
// Its map:
//   - Attempt (attempt.go): New takes the call (server/dircall's Call,
//     holding A, the scan of L and the object source), the state publish
//     read, the call's publication ID, the message and what the pending
//     entry says of the version-4 call (V4: the generations its first and
//     newest versions were built on). Run checks that the store is named
//     and that the record can describe the state, adopts an accepted
//     pending publication, merges L with R (skip: the merge is R itself),
//     syncs the object cache to R's closure, and writes the pack: the
//     changed files' objects, the tree (tree.go: only the changed
//     directories rebuilt from R's tree when few paths changed), and the
//     head commit. Meanwhile the pending entry is built and recorded
//     (record.go, through the call's pending.Tracker): from the merge on
//     when the change is L's delta from A (the entry needs nothing
//     else), once the head commit is written otherwise; WaitRecorded
//     returns once it is in P. A record written for a version whose
//     build then fails names a publication never registered, as a crash
//     between the record and the registration leaves: the next commit
//     resumes it under its ID.
//   - Outcome is the part of the accepted (last) attempt the commit's
//     finish reads: the observed state, R's files, the merge, the pack and
//     the paths it changed. The Attempt's other fields (Head, Pend,
//     Publication, Changes, From) are read by the finish too.
//   - ErrConflict: Run's error when the merge with R conflicts (the
//     commit then writes the conflict blocks into L).
//
// The data flow: publish's build callback (server/commit's publish.go)
// makes an Attempt on the state publish read and runs it; the engine then
// prepares the baseline accepting it would record, waits for the pending
// record, and hands Head and Pack to publish to register.
//
// The invariants it owns. The closure rule: the pack holds every object
// the new head's closure has that the observed head's closure lacks; an
// object is left out only when it is certainly in the observed head's
// closure (a file of R, a chunk of R's version of the same path, a tree
// R reuses), never merely because the cache holds it. That is what lets
// a reader catch up through rollups without every increment. And the
// pending record is in P before the version is handed out for
// registration: from then on any writer's fold may accept it, and a
// commit accepted and then interrupted must be found by the next call as
// common ground, not as a change that conflicts with itself. Together
// they keep L2 of docs/local-state.md for the store: each version
// publishes merge(A, L, R) for the R it was built on, so the caller's
// edits arrive once and no one else's lines twice.
//
// It must not import server or server/commit: the engine hands it the
// call and values; nothing here climbs back.
package build
