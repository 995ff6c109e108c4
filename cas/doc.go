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
//	objects ──PackWriter.Put──▶ Finish ──▶ pack bytes ──▶ remote / Store.AddPack
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
//   - Store: a directory of packs with an in-memory ID -> (pack, offset)
//     index; objects are read with ReadAt, never whole packs, through a
//     small cache of open pack handles (store_files.go). A merged index
//     file caches every pack's index sorted by ID (store_index.go), so
//     opening a store of hundreds of packs reads one file, not each pack.
//   - Memory: an in-memory Source and Sink, for tests and staging.
//
// Trust: a pack's trailer checksum is verified whenever its bytes are
// accepted (OpenPack, Store.AddPack, Store.VerifyPack); packs already in a
// Store directory were verified when they were added, so reopening them
// checks only their header, length, trailer fields and index structure.
// Every object's ID is verified on every decode by Pack and Store; the
// helpers (ReadFile, ReadTree, CheckClosure) also check that a Source
// returned the object they asked for, of the kind they expect.
package cas
