// Package mcpserver is the MCP adapter: it exposes the notebook engine to
// agents as exactly two tools, notes_pull and notes_commit, over stdio with
// mark3labs/mcp-go. spec/mcp-tools.md is normative for every byte an agent
// sees; this package is the only place that knows it.
//
// Data flow of one tool call:
//
//	JSON-RPC tools/call ─▶ handler: fresh diagnostic ID, start log record
//	  ─▶ decodeArgs(Params.RawArguments)   strict: unknown, duplicate, null,
//	                                       wrong type, byte bounds, U+0000,
//	                                       blank message, ~/ and absolute path
//	  ─▶ Engine.Pull / Engine.Commit       (*server.Error on domain failure)
//	  ─▶ okResult  | errResult             structured object, fields in spec order
//	  ─▶ okText    | errText               the text item (directory | candid report)
//	  ─▶ scrub                             defence in depth on every diagnostic text
//	  ─▶ completion log record (same mcpReqID = diagnosticId)
//
// Domain errors, including bad arguments, are always isError results built
// from *server.Error; the handler never returns a Go error for them, so no
// raw error text reaches the model. A cancelled request and malformed
// JSON-RPC stay protocol errors (mcp-go answers those itself).
//
// Writable and read-only sets are advertised on four surfaces: the server
// instructions, both tool descriptions (surfaces.go), and the readOnly and
// writable arrays of every result. With neither set configured every
// surface is byte for byte the spec's.
package mcpserver
