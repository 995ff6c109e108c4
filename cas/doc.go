// Package cas is slivingdoc's content-addressed object store: object IDs,
// the canonical object codec, content-defined chunking, packs and the local
// pack store. docs/format.md is the normative byte layout; this comment is
// the map of the code.
//
// Data flow of a commit, bottom up:
//
//	content ──Chunks──▶ chunk objects ─┐
//	        (FastCDC, 2/8/64 KiB)      ├─▶ file object ─┐
//	content ≤ InlineMax ── inline ─────┘                ├─▶ tree objects ─▶ commit object
//	                                      WriteTree ────┘
//	content ──HashFile──▶ file ID + chunk list ──WriteFileChunks──▶ the same
//	        objects as WriteFile, cut at the listed sizes (no second cut or hash)
//	objects ──PackWriter.Put──▶ Finish ──▶ pack bytes ──▶ remote / Store.AddPack
//	packs fetched together ──▶ Store.AddPacks ──▶ one bundle file (bundle.go)
//
// Reading goes the other way: Store (or Pack) is a Source; ReadTree turns a
// root tree into the flat path map, ReadFile reassembles a file, and
// CheckClosure walks everything a commit reaches.
//
// Types:
//   - ID: BLAKE3-256 of an object's canonical encoding (Body).
//   - Object{ID, Kind, Body}: Body starts with the kind tag. DecodeObject
//     checks a body against the rules of its kind; File, Tree and Commit are
//     the decoded forms with Encode*/Decode* pairs that round-trip byte for
//     byte, so there is exactly one encoding of every value.
//   - PackWriter (a Sink) and Pack: one immutable pack; OpenPack verifies
//     the whole-pack checksum and index, Pack.Get verifies each object's ID.
//   - Tree deltas (delta.go; pack version 2): PackWriter.PutDelta stores a
//     tree as its base tree's ID plus the entry edits from it, when that is
//     smaller, because a one-line change otherwise rewrites its whole
//     directory tree of incompressible IDs. The object and its ID are
//     unchanged; a reader rebuilds the body from the base and checks the
//     ID. The base is in the same pack or among what the reader holds
//     (Pack.WithBases; a Store looks in all its packs; Pack.Bases lists
//     what a pack needs); one it holds nowhere is ErrMissingBase. Chains
//     are refused beyond MaxDeltaDepth, and the writer stops at
//     WriteDeltaDepth as GetDepth reports it. A pack with no delta is
//     written as version 1, so Put alone writes what it always did.
//     Only writers to format-v4 stores call PutDelta (their proposals
//     and rollups; older binaries refuse such a store before reading a
//     pack).
//   - Store: a directory of packs with an in-memory ID -> (file, offset)
//     index; objects are read with ReadAt, never whole packs, through a
//     small cache of open file handles (store_files.go). A pack lives in a
//     file of its own name, or with others in a bundle: AddPacks writes
//     the packs of one call (one sync of the server) as one file, because
//     creating a file costs far more CPU than writing its bytes. A bundle
//     (bundle.go) is a header listing (name, offset, length) per pack, with
//     its own checksum, then the packs back to back, each a complete pack;
//     a pack keeps its name (HasPack, VerifyPack), and dropping a damaged
//     pack (RemovePack) removes its whole file. Files are written to a
//     temporary file renamed in, not fsynced: a killed writer leaves the
//     whole file or none, and a file a power loss tears fails the load or
//     read checks and is fetched again. A merged index caches every
//     file's objects sorted by ID and the names of the packs in each
//     (store_index.go), with a side index for the files added since its
//     last rewrite, so opening a store of hundreds of packs reads two
//     files and lists the directory, neither reading nor stat'ing each
//     pack (a name stands for its pack's bytes); and it records the
//     directory's identity, so opening a store whose directory has not
//     changed since costs a stat and two reads, whatever the number of
//     files.
//   - ObjectSet: an in-memory Source and Sink, for tests and staging.
//
// Trust: a pack's trailer checksum is verified whenever its bytes are
// accepted (OpenPack, Store.AddPack(s), Store.VerifyPack); packs already in
// a Store directory were verified when they were added, so reopening them
// checks only their header, length, trailer fields and index structure
// (and a bundle's header against its checksum).
// Every object's ID is verified on every decode by Pack and Store (a
// delta's after it is rebuilt, so AddPacks needs its bases: in the store
// or in the packs of the same call); the
// helpers (ReadFile, ReadTree, CheckClosure) also check that a Source
// returned the object they asked for, of the kind they expect.
package cas
