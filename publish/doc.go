// Package publish is the publication protocol of format version 4
// (docs/publication.md): one path for every commit, whatever the fleet.
// It sits above merge and remote (folding proposals merges trees) and
// below the engine, which supplies the build of a change, the objects of
// recent history and the clock; control never climbs back.
//
// Types:
//
//   - Publisher (New, Options): one store; Commit publishes one change
//     under one publication ID and returns the generation that names it;
//     Resume continues a call an earlier process registered (a pending
//     record adopted after a crash), looking for its ID before building;
//     CommitAfter is Commit for a writer that passes the Streak its
//     previous commit returned (Result.Streak): the LIST-skip rule, a
//     writer alone folding without a LIST for up to MaxSkips commits.
//   - Build, Change: the engine's half of a commit — build my change on
//     this state's head → head, pack, author (the message and time are
//     in the head commit). Called again for each new version (a decline,
//     or the window passing the version).
//   - Objects: the engine's source of the objects of recent history (its
//     cache after catching up), for folding.
//   - Clock: the only source of time (Now and a cancellable Wait); the
//     package never reads the wall clock or sleeps by itself.
//   - State: one read of `current` (remote.ManifestV4 and its ETag).
//
// Data flow of one Commit (publish.go; the step numbers are §5.1's):
//
//	GET current ─▶ (1) our ID in `recent`? ─▶ accepted at that generation
//	   │
//	   ▼ (2) Build on its head ─▶ PUT proposals/<G>-<id> (descriptor, pack)
//	   │        alone (Streak) ─▶ fold ours without a LIST (below)
//	(3) LIST proposals/ ─▶ pending = not accepted, not declined, C−G < K,
//	   │                    newest version per ID, sorted by (G, id);
//	   │                    registered descriptors (-r-, -c-) kept aside
//	   ├─ ours first ─▶ fold.go, a folding on C extended after each
//	   │     LIST: GET the versions it adds, catch up, merge each onto
//	   │     the fold so far, decline what does not merge (begun again
//	   │     if C or the order's prefix changed). Gather: LIST again
//	   │     Gather after the write we read landed, then while commits
//	   │     still arrive, folding what each LIST listed meanwhile;
//	   │     after the last LIST: PUT marker (if others; beside the
//	   │     rest, in before the write), fold only what it added
//	   │     ─▶ GET the listed descriptors the write could take
//	   │     (registered; remote.AddRegistered copies them) ─▶ PUT
//	   │     packs/groups/<blake3>.pack (if re-parented) and segments
//	   │     (tail fold) ─▶ ReplaceIfMatch(current, ETag of C)
//	   │        ok ─▶ accepted at C+1+i (i: our place in the group);
//	   │              ours declined ─▶ rebuild on it, register, LIST
//	   │        412 ─▶ GET current, LIST again at once
//	   │        429 ─▶ one jittered estimate, then as 412
//	   │        ambiguous ─▶ GET current: named ─▶ accepted; unchanged
//	   │                     ─▶ fold again on the same ETag; moved ─▶ LIST
//	   └─ not first ─▶ wait (§5.3): GET current when the write ahead
//	         should have landed (the next folder reads its proposals
//	         meanwhile), then every poll (the others backing off); unmoved
//	         (same ETag) ─▶ not decoded again; moved
//	         ─▶ decide again; unmoved past Stall (+ rank) ─▶ LIST: a fold
//	         marker not seen before ─▶ wait again; else fold anyway
//
// The fold (fold.go) is deterministic: from the same state and the same
// proposals every folder builds the same members, heads and group pack.
// It is a left fold (each version merged onto the fold so far, reading
// its own pack, what the fold made before it and the state's objects),
// so a folding extended piece by piece is the fold at once: timing
// decides how much of a write's fold is done before its folder's last
// LIST, never what the write accepts (it is the fold, on the state read,
// of exactly the versions that LIST showed).
// A path only the proposal changed since its parent is taken as it is; a
// path the fold changed too is merged three-way by merge.Text (base: the
// parent's version, local: the proposal's, remote: the fold's); a text
// conflict, a modify/delete, a case-folded twin or a file against a
// directory declines the proposal whole (recorded in `declined`), the
// folder's own too: its write accepts the others, and it rebuilds after
// (before, when nothing merges: a write accepts at least one, so it
// makes none). Rebuilt first, its version, keyed by C, sorted after the
// others, whose proposers waited for its old one until Stall. Each
// member taken is re-parented: new trees and a commit with its own
// publication ID, time and message on the previous head.
//
// The invariants of docs/publication.md §6 and where each is kept:
//
//  1. One authority: a call is accepted only by a `current` naming its ID
//     (Commit returns only from acceptance() or a won write).
//  2. Objects before the write: fold PUTs the group pack and segments,
//     and every member's proposal was read from the store, before the
//     conditional write.
//  3. No ID accepted twice: pending() skips IDs `recent` names and
//     versions older than K; New refuses K + M beyond remote.RecentWindow;
//     remote.NextV4 refuses an ID twice in `recent` (defence in depth).
//  4. Each commit its own generation: members at C+1 … C+k in fold order
//     (remote.NextV4); Result is the generation naming our ID and its head.
//  5. No accepted line lost: fold.go takes a proposal whole or declines it.
//  6. OK only with proof: Result comes from an acknowledged write or a
//     read of `current`.
//  7. A lost, refused or ambiguous write changes nothing but orphans:
//     every object is immutable and content- or ID-keyed.
//  8. Decided outcomes: a version is folded only while C − G < K.
//  9. A checkpoint in `current` is its through generation's tree:
//     remote.AddRegistered takes one only with that generation's head
//     (the tail's, or headAt's from the segments).
//  10. Descriptors name stored objects: a builder stores the pack before
//     it registers; a fold copies only descriptors it read, onto a write
//     of its own members (never a write just to copy them).
//
// A `current` of version 1, 2 or 3 is read as the base of the first
// version-4 write (remote.UpgradeToV4; State.Old is the old manifest):
// the fold's write on it, conditional on its ETag, is the upgrade.
//
// Registered descriptors are built by the engine (rollups and
// checkpoints, server/); this package only copies them. Nor is cleanup
// (remote/cleanup_v4.go, run by server/commit/cleanup.go) this package's.
// The exhaustive small-scope test (explore_test.go) runs this code
// under internal/crashpoint's schedule explorer.
package publish
