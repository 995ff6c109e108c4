// Package objcache is the host's copy of a store's objects: the object
// caches under P/stores/<key>/chains, one cas.Store per chain of the
// accepted notebook, and the reads and fetches the engine makes through
// them.
//
// Map:
//
//	Caches ─Open / Sync─▶ Chain: one cache directory, named after the
//	    checkpoint its chain starts from (Key, KeyAt, KeyOf), and its reach
//	    (the generation whose head's closure it holds, recorded beside it
//	    in P/stores/<key>/reach so processes sharing P share it)
//	  Sync: the checkpoint's pack, then remote.Notebook.CatchUp's plan (on a
//	    version-4 store remote.PlanCatchUpV4's, with what the proposals'
//	    trees are deltas of) from the reach to the state's generation,
//	    downloaded in parallel and kept as bundles (cache.go)
//	  Fill, FillFrom: every pack of the chain, for reading older
//	    history, which a catch-up through rollups skips (cache.go)
//	  the first sight of a chain removes the caches of chains the store
//	    no longer keeps, except those a baseline in P may still need
//	    (prune.go); Heal drops the packs that fail verification (heal.go)
//	Source: reads the current chain's cache, then older ones newest
//	  first, then More (Accepted: the packs of a re-parented commit's own
//	  generation, accepted.go); FetchBase fetches a merge base's packs
//	  again when no cache holds them (server/dircall's basefetch.go)
//	Sink: what a commit packs, skipping what the observed head's closure
//	  holds and storing trees as deltas (sink.go); TreeOf reads a commit's
//	  files
//	BuildRollups: the rollups and checkpoint a publication is due for,
//	  kept in the caches too (checkpoint.go)
//	Recent: a long-lived engine's contents of the file versions it
//	  published last (recent.go)
//
// The invariant it owns: everything in one chain cache directory belongs
// to that accepted chain, because within a chain the pack list only grows
// and a cache is named after the chain's start; so a commit skips
// uploading any object the cache holds. Every object read from a cache is
// checked against its ID before use (cas), and a damaged one is dropped
// (Heal) and fetched again from the store, which is the authority.
//
// Errors are plain: a failure to fetch or keep a pack is a *FetchError
// (the engine reports it as the pack's), everything else is returned as
// it came; the engine maps them to its catalogue. The package imports cas,
// remote, server/pstate and internal packages, never the engine (package
// server).
package objcache
