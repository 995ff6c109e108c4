// Package storeview is the store as the engine sees it: the wrappers the
// engine puts around remote.Store, what it remembers of the store's
// guarantees, and which store it is (its ID, under which this host keeps
// everything about it).
//
// What it holds:
//
//	remote.Store (the backend)
//	  └─ WithHostObjects ─▶ the host's copies of the objects writers
//	     (hostobjects.go)     exchange (proposal versions, group packs,
//	                          history segments, registered descriptors),
//	                          under P/stores/<key>/objects: a GET reads a
//	                          copy first, a PUT or GET keeps one; every
//	                          read and write of the engine passes here
//	       └─ Timing.Timed ─▶ the store as package publish sees it: the
//	          (timing.go)      requests of `current` and of small
//	                           proposals are timed, and the estimates of
//	                           a conditional write and a round trip,
//	                           kept per store in P/stores/<key>/timing,
//	                           time publish's waits
//	Verdict (probe.go)     ─▶ the guarantees probe's verdict (remote.Probe),
//	                           cached in P/stores/<key>/probe for a day and
//	                           forgotten after an unexpected store error
//	Identity (identity.go) ─▶ which store it is: its ID (read once and
//	                           kept in P's store-id record, read again
//	                           when `current` looks like another store's;
//	                           NameStore gives it one before a first
//	                           publication), the key <key> of its records
//	                           (Dir), and the highest generation seen,
//	                           against which every read of `current` is
//	                           checked (Observe, the engine's
//	                           remote.Options.Observe)
//	remembered.go          ─▶ the store each directory remembers
//	                           (pstate.Remembered): recorded with each
//	                           baseline (Remember), found from a directory
//	                           or one below it (RememberedAbove), compared
//	                           with the store at the URL now (RecordedOther)
//	AfterReply             ─▶ a long-lived engine's work left after a
//	(after_reply.go)           commit's reply (keeping the pack, recording
//	                           the highest generation: Identity's Later),
//	                           held until the transport's reply is
//	                           written (Release); the next call and
//	                           Close start and wait for whatever is left
//
// The invariants it owns:
//   - A host's copy holds what the store holds, or held, under the same
//     key (docs/publication.md, invariant 13). A copy is filled only from
//     bytes this host stores under that key or that the store returned,
//     checked against what the key names before it is used, and kept
//     under the store's ID, so another store met at the same URL never
//     reads it. A copy has no role in acceptance: `current` stays the
//     only authority.
//   - The timing estimates only time publish's waits: a wrong or missing
//     one makes a waiter read `current` early or late, never changes what
//     is accepted.
//   - A verdict is trusted only while fresh and for the store identity
//     it was proved for; a store that refuses writes is read-only for
//     this process and never recorded as proved.
//   - What a host keeps about a store belongs to that store, not to its
//     URL: every record of it is under the key of its ID, so a store
//     deleted and started again at the same URL (a new ID) meets none of
//     the old one's caches, nor its highest generation; and a directory
//     is never used with another store (the engine refuses a call whose
//     store is not the one the directory remembers, and a directory's
//     record made against another store at the URL is no record).
//
// The directory of the store's records (P/stores/<key>) is the
// Identity's (Dir), which re-keys it when the store turns out to be
// another; the other parts of this package are handed it by the engine
// (a func or a path) and never compute it. Errors are plain: remote's
// sentinels, which the engine maps to its catalogue.
//
// It builds on server/pstate (names and writes in P), remote and
// publish (publish.Options), and never imports package server.
package storeview
