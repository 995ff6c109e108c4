// Package diag is the one diagnostics path of slivingdoc: the structured
// error envelope built from a *server.Error, its candid text rendering,
// diagnostic IDs, the scrub policy, and text made safe for a terminal. It
// sits beside server.Catalog, below server/mcpserver and cmd/slivingdoc,
// which both use it:
//
//	*server.Error ─▶ NewEnvelope(err, NewID(), sets, scrubber)
//	                   tokens completed from server.Catalog,
//	                   message, detail and recovery stage scrubbed
//	   ├─▶ MCP: the structured error (JSON) and Envelope.Text(Plain)
//	   └─▶ CLI: Envelope.Text(style with colour and TerminalSafe)
//	slog records (the CLI's handler) ─▶ Scrubber.Record
//	verify details, usage errors    ─▶ Scrubber.Text
//
// One policy (scrubRules plus the literals a process registers: its private
// root, credential values) is applied to every diagnostic text that leaves
// the process at info level or above. File paths in an envelope are the
// caller's own names and are not scrubbed: an agent must find the file.
package diag
