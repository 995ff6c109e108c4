// Package pull brings the visible directory L and its baseline A to
// merge(A, L, R) for one accepted state R, and resynchronises a directory
// after a call that was interrupted once L may have changed.
//
// Its map:
//   - Run (pull.go) is the synchronisation a pull, a commit's
//     resynchronisation and recovery share: scan L, read `current`, and
//     SyncTo it, once more with a newer `current` when the one read named
//     a pack a cleanup has since removed. SyncTo merges R into L against
//     A and records R: a record the store outlived is set aside first
//     (server/dircall), an interrupted rewrite is settled once the chain
//     can be read (server/rewrite's Settle), a publication the store
//     accepted is taken as common ground (server/pending), then the
//     merge and the plan (server/dircall over server/plan), and the
//     rewrite (Materialise). ConflictError reports the conflict blocks a
//     merge left in L.
//   - Materialise (pull.go) runs server/rewrite's Materialise and turns
//     its Interrupted at once into RecoveryFailure.
//   - RecoveryFailure (recovery.go) turns a failure after L may have
//     changed into RECOVERY_FAILURE: it records the recovery flag at the
//     failed stage and resynchronises once, in a context of its own, from
//     `current`; the report says whether that worked. RecoverFirst runs a
//     pending resynchronisation before a call that would change L or
//     publish.
//
// The invariant it owns: a call that finds the recovery flag settles and
// resynchronises before it does anything else; a failure once L may have
// changed becomes RECOVERY_FAILURE after exactly one resynchronisation
// attempt, never a nested one (Call.InRecovery).
//
// It must not import server: the engine hands it the call
// (*dircall.Call); nothing here climbs back.
package pull
