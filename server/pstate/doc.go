// Package pstate is P, the private state a host keeps under
// Config.PrivateRoot: how its files are named and written, and the records
// every crash leaves readable. The engine (package server) decides what to
// record and when; this package owns the files, their formats and their
// writing.
//
// The layout of P:
//
//	stores/<hash(store identity)>/store-id              the store's ID, as last read, and its key (ReadStoreID)
//	stores/<key>/highest                                the highest generation seen (Highest)
//	stores/<key>/probe                                  cached probe verdict (server/storeview)
//	stores/<key>/chains/<through>-<hash(chain)>/        object cache (server/objcache)
//	stores/<key>/...                                    the store's other caches (timing, the host's copies of objects, blame's files), their packages'
//	remotes/<hash(L)>                                   the store L belongs to (Remembered)
//	dirs/<hash(store identity, L)>/                     one directory's records (Dir):
//	  lock                                              cross-process lock (Lock)
//	  where                                             which L and store the records belong to
//	  baseline                                          A: generation, head, path→file ID, held paths (Baseline)
//	  .baseline.spare                                   the next A, written while a commit publishes (Prepared); after it, the A before
//	  .baseline.next.spare                              the next A, durable, while L is rewritten, named by the record's checksum (RewriteRecord); after it, the A before
//	  baseline.next                                     the same, as earlier versions wrote it: read and removed, never written
//	  held/<file ID hex>                                content of a held base, or one settling may need (Dir.SaveHeld)
//	  rewrite-<checksum>                                the rewrite in flight (RewriteRecord)
//	  .rewrite.spare                                    the file a rewrite record is written through and removed into
//	  statcache                                         stat → file ID of L's files (Dir.LoadStatCache)
//	  recovery                                          present: an operation on L may be unfinished (RecoveryFlag)
//	  .recovery.spare                                   the file the flag is written through and cleared into
//	  pending                                           publication in flight (PendingRecord)
//	  .pending.spare                                    the file pending is written through and removed into
//	  saved/<time>/<path>                               copies a forced restore or revert kept (the engine's)
//	  streak, withheld                                  the engine's hints, written with WriteAtomic and Seal
//
// The data flow of a call: the engine takes the directory's Lock, reads
// its Baseline (ReadBaseline), the RecoveryFlag and the PendingRecord,
// and loads the stat cache. Before it rewrites L it writes the next
// baseline (SaveNextBaseline), the RewriteRecord and the RecoveryFlag, in
// that order; after, it installs the next baseline, clears the flag and
// removes the record. Each of the three is written over a spare and given
// back to it (rewrite.go's Spares), so a rewrite creates and frees no file
// of P once the directory has made one. A commit writes its PendingRecord before it
// publishes and a Prepared baseline while it does, installed by
// WriteBaseline once the publication is accepted. Every read of the
// store's `current` is checked against the Highest generation seen.
//
// What it owns (the numbers are those of docs/local-state.md):
//   - a file of P is written whole or detected torn: replaced through a
//     temporary file (WriteAtomic, WriteReplace) or overwritten in place
//     with its own check (Seal, Unseal, Overwrite), and the binary records
//     (baseline, stat cache, rewrite record) end in the BLAKE3 of their
//     bytes;
//   - a baseline, pending record or rewrite record read back is the one
//     written or reads as corrupt (ErrCorrupt, or none), never half of one:
//     what L3 and L4 (settling a rewrite, once, durably) and L6 (an
//     accepted commit is common ground) build on;
//   - a spare is never read as a record: records are read by name (a
//     spare's name is no record's) or, for the next baseline, by the
//     checksum the record names, which a spare's stale or torn bytes
//     cannot match;
//   - the Lock serialises the calls on one directory across processes, and
//     is released by the system when its holder dies;
//   - names in P are hashes (HashKey): a path or store URL is never spelled
//     out in a name.
//
// It builds on cas (IDs, checksums), remote (the store, which the check
// of a generation lists), server/workdir (the stat cache's entries) and
// internal/osfile and internal/crashpoint (the writes and their crash
// points). It imports nothing of the engine (package server) nor of the
// packages built on it (server/storeview, server/objcache,
// server/history): the engine, its caches and its history readers all
// build on it.
package pstate
