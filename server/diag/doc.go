// Package diag is the error catalogue of slivingdoc and its one diagnostics
// path: the codes, reasons and actions every domain error is made of, the
// one mapping of lower-level failures to them, the structured error
// envelope built from an error, its candid text rendering, diagnostic IDs,
// the scrub policy, and text made safe for a terminal. The engine (package
// server) builds its errors here; server/mcpserver and cmd/slivingdoc
// render them.
//
// Map:
//
//	catalog.go    Code, Action, Error (FileError, Recovery), the reason and
//	              file-reason tokens, Catalog (one CatalogRow per code and
//	              reason: action, retryable, file reasons, meaning) and
//	              CatalogTokens, the enums of the advertised outputSchema
//	errmap.go     New and InvalidRequest (an Error of one row, its default
//	              message), Map (any failure: remote and cas sentinels,
//	              contexts, OS errors), MapPack and MapProbe (a pack's and
//	              the probe's failures); the closed set of LOCAL_IO details
//	envelope.go   Envelope, NewEnvelope, RowFor, Internal, Envelope.Text
//	scrub.go      Scrubber: the policy and the literals a process registers
//	id.go         NewID
//	terminal.go   TerminalSafe
//
// Data flow:
//
//	engine refusal          ─New, InvalidRequest─▶ *Error
//	lower-level failure     ─Map, MapPack, MapProbe─▶ *Error (cause kept
//	                         for the log only)
//	*Error ─▶ NewEnvelope(err, NewID(), sets, scrubber)
//	            tokens completed from Catalog,
//	            message, detail and recovery stage scrubbed
//	   ├─▶ MCP: the structured error (JSON) and Envelope.Text(Plain)
//	   └─▶ CLI: Envelope.Text(style with colour and TerminalSafe)
//	slog records (the CLI's handler) ─▶ Scrubber.Record
//	verify details, usage errors    ─▶ Scrubber.Text
//
// The invariant it owns: every error a caller sees is a catalogued code
// and reason, valid against the advertised outputSchema (server/mcpserver
// builds the schema's enums from CatalogTokens, and docs/errors.md is
// generated from Catalog), and its text is scrubbed. Catalog is the one
// list of tokens: a token is added by adding a row (and its default
// message in errmap.go). One scrub policy (scrubRules plus the literals a
// process registers: its private root, credential values) is applied to
// every diagnostic text that leaves the process at info level or above.
// File paths in an envelope are the caller's own names and are not
// scrubbed: an agent must find the file.
//
// It builds on cas, merge, remote, server/workdir and server/pstate (their
// sentinels and file reasons, which it maps). It imports nothing of the
// engine (package server) nor of the adapters above it, so every package
// of the engine can return its errors.
package diag
