// Package storeview is the store as the engine sees it: the wrappers the
// engine puts around remote.Store, and what it remembers of the store's
// guarantees.
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
//
// The directory of the store's records (P/stores/<key>) belongs to the
// engine, which re-keys it when the store turns out to be another: it is
// passed in (a func or a path), never computed here. Errors are plain:
// remote's sentinels, which the engine maps to its catalogue.
//
// It builds on server/pstate (names and writes in P), remote and
// publish (publish.Options), and never imports package server.
package storeview
