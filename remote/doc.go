// Package remote is the object-store boundary of slivingdoc and the
// publication protocol that runs over it (DESIGN §5).
//
// Data flow, bottom to top:
//
//	Store (interface)            get / head / list / put / delete plus the two
//	  |                          conditional writes every guarantee rests on:
//	  |                          CreateIfAbsent (If-None-Match: *) and
//	  |                          ReplaceIfMatch (If-Match: <etag>).
//	  |   backends: Mem (fault injection, tests), File (embedded default,
//	  |   one directory, several processes), S3 (s3*.go, aws-sdk-go-v2).
//	  |
//	Manifest                     the decoded `current` object, version 1: a
//	  |                          strict, byte-stable JSON document naming the
//	  |                          active Chain (checkpoint + ordered increments)
//	  |                          and the retained older chains. DecodeManifest
//	  |                          rejects anything the encoder would not write.
//	  |
//	Notebook                     ReadCurrent -> State{Manifest, ETag};
//	                             FetchPack verifies size and BLAKE3;
//	                             Publish: build(proposal) -> Put pack ->
//	                             conditional replace of `current`; a lost race
//	                             re-reads and rebuilds after a jittered
//	                             backoff, an ambiguous reply is resolved by
//	                             looking for the publication ID.
//
// Probe runs the same guarantee checks as the contract suite
// (remote/remotetest) on a disposable key, so the startup check and the
// tests cannot disagree about what a compatible store is.
//
// Errors: every backend maps its failures to the sentinels in errors.go and
// keeps the cause; callers use errors.Is. No error text carries credentials.
package remote
