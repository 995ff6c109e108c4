// Package pstate is P, the private state a host keeps under
// Config.PrivateRoot: how its files are named and written, and the records
// every crash leaves readable.
//
// What it owns: a file of P is written whole or not at all (WriteAtomic,
// WriteReplace), or, for the small records rewritten on most commits, in
// place with its own check (Seal, Unseal, Overwrite), so that a torn write
// reads as no record, never as a wrong value. Names in P are hashes
// (HashKey): a path or store URL is never spelled out on disk.
//
// It imports nothing of the engine (package server): the engine, its
// caches and its history readers all build on it.
package pstate
