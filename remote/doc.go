// Package remote is the object-store boundary of slivingdoc and the
// publication protocol that runs over it (DESIGN §5).
//
// Data flow, bottom to top:
//
//	Store (interface)            get / head / list / put / delete plus the two
//	  |                          conditional writes every guarantee rests on:
//	  |                          CreateIfAbsent (If-None-Match: *) and
//	  |                          ReplaceIfMatch (If-Match: <etag>).
//	  |   backends, each its own package behind this boundary:
//	  |   remote/filestore (embedded default, one directory, several
//	  |   processes), remote/s3store (the only importer of aws-sdk-go-v2),
//	  |   internal/memstore (fault injection, tests); remote/storeurl
//	  |   parses store URLs and opens the right one.
//	  |
//	Manifest                     the decoded `current` object: a strict,
//	  |                          byte-stable JSON document. Version 1 (read
//	  |                          forever) names the active Chain (checkpoint
//	  |                          + every increment) and the retained chains.
//	  |                          Version 2 (written; manifest_v2*.go) stays
//	  |                          under 16 KiB: generation, head, the active
//	  |                          and retained checkpoints, the tail (the
//	  |                          newest <= 15 increments) and the descriptors
//	  |                          of a few immutable Segments under index/
//	  |                          (content-named, 8 entries each, levels of
//	  |                          8^n) that index every older increment.
//	  |                          Version 3 (written since; the same plus
//	  |                          carriers): a fold's segments travel as
//	  |                          chunk objects in the folding publication's
//	  |                          pack (Manifest.Carried), so no commit needs
//	  |                          an upload of its own for them; version-2
//	  |                          segments of their own stay readable.
//	  |                          ExtendAt folds; DecodeManifest rejects
//	  |                          anything the encoder would not write.
//	  |
//	History (history.go)         Publications(state, from, to): the retained
//	  |                          publications of a generation range, reading
//	  |                          only the segments that overlap it; Chains:
//	  |                          them grouped as version 1's chains.
//	  |
//	Rollups (rollup.go)          packs/rollups/<first>-<level>.pack: per
//	  |                          aligned block of 2^level generations (levels
//	  |                          2..10), the objects its last head reaches and
//	  |                          its first head does not; of the blocks from
//	  |                          generation 1 only the newest is kept.
//	  |                          Written in the background by whoever ended
//	  |                          the block; no descriptor (a 404 means "use
//	  |                          smaller blocks"). planCatchUp / CatchUp: from
//	  |                          a cache's reach to head in <= log2(k)+2
//	  |                          packs.
//	  |
//	Notebook                     ReadCurrent -> State{Manifest, ETag};
//	                             FetchPack verifies size and BLAKE3;
//	                             Publish: build(proposal) -> Put pack (carrying
//	                             the segments a fold made, or Put them too when
//	                             it does not) -> conditional replace
//	                             of `current`; a lost race
//	                             re-reads and rebuilds after a jittered
//	                             backoff, an ambiguous reply is resolved by
//	                             looking for the publication ID.
//
// Checkpoint, Cleanup and Verify (checkpoint*.go, cleanup.go, verify.go)
// work on both versions.
//
// Version 3's registrations, lead markers and group packs
// (proposal.go): binaries before format version 4 left them under
// proposals/; this build writes none, readers never need them (every
// generation they helped accept names its own increment), verify counts
// them as known objects and CleanProposals removes them.
//
// Probe runs the same guarantee checks as the contract suite
// (remote/remotetest) on a disposable key, so the startup check and the
// tests cannot disagree about what a compatible store is.
//
// Errors: every backend maps its failures to the sentinels in errors.go and
// keeps the cause; callers use errors.Is. No error text carries credentials.
//
// This package imports no backend: the backends import it (for Store,
// ObjectInfo, the sentinels, CheckKey and CheckPrefix), and the contract
// suite remote/remotetest runs against each of them.
package remote
