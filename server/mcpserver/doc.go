// Package mcpserver is the MCP adapter: it exposes the notebook engine to
// agents as exactly two tools, notes_pull and notes_commit, over stdio.
// spec/mcp-tools.md is normative for every byte an agent sees; this
// package is the only place that knows it.
//
// # Transport
//
// The protocol is mark3labs/mcp-go's server package (lifecycle, methods,
// both protocol eras, tools/list, tools/call dispatch), run by its
// StdioServer. Between stdio and mcp-go sits the edge (edge.go), a wrapping
// transport that fixes what bare mcp-go answers differently from MCP and
// JSON-RPC; conformance_test.go replays mcp-go v1.2.1's recorded answers and
// names each deliberate difference (edgeDeviations):
//
//	stdin ─▶ edge.readLoop: one message per '\n' line, at most MaxLineBytes
//	  │        longer: -32600, its id when the kept prefix names one
//	  ├─ envelope: top-level members as byte spans
//	  │    id null, bool, object, fraction, twice: -32600, id null
//	  │    a response (result/error, no method): dropped, we send no requests
//	  │    notifications/cancelled: the call is marked cancelled (its
//	  │      response will be dropped), its engine context cancelled with
//	  │      the client's reason, and mcp-go told under the alias
//	  └─ a request: its id replaced by an alias "~sdN" ──▶ io.Pipe ──▶ mcp-go
//	mcp-go ─▶ edge.Write ─▶ alias back to the client's id, byte for byte
//	                        (ids above 2^53 intact; mcp-go decodes to float64)
//	                        cancelled request: no response at all
//	                        -32600 "unparsable ...": -32602, no Go text
//	                        no method, bad tools/list cursor: our message
//	                        ─▶ stdout; the first failed write ends serving
//
// End of input, ctx cancellation (SIGTERM, SIGHUP, SIGINT in serve) and a
// closed stdout all end the same way: the edge closes mcp-go's input, mcp-go
// waits for the calls in flight, whose engine contexts are detached from
// mcp-go's (which EOF cancels) so a commit finishes; ShutdownGrace after
// input ended they are cancelled. Serve then returns nil.
//
// Left as mcp-go answers (pinned by the recording): a blank line or a batch
// is -32700 with id null; tool calls run on a pool (64 workers here, then
// 100 queued, then the read loop serves a call itself, so a host that keeps
// more than 64 calls in flight slows its own reads).
//
// # Tool calls
//
//	mcp-go tools/call ─▶ handler: engine context (callContext), fresh
//	                     diagnostic ID (diag.NewID), start log record
//	  ─▶ decodeArgs(Params.RawArguments)   strict: unknown, duplicate, null,
//	                                       wrong type, byte bounds, U+0000,
//	                                       lone surrogates, blank message,
//	                                       ~/ and absolute path
//	  ─▶ Engine.Pull / Engine.Commit       (*server.Error on domain failure)
//	  ─▶ okResult  | diag.NewEnvelope      structured object, fields in spec order
//	  ─▶ okText    | Envelope.Text         the text item (directory | candid report)
//	  ─▶ diag.Scrubber                     the one scrub policy, on every diagnostic text
//	  ─▶ completion log record (same mcpReqID = diagnosticId)
//
// Both tools advertise outputSchema (schema.go): the success object or the
// structured error, since clients validate structuredContent either way;
// the error's tokens are enums built from server.Catalog. An envelope with
// a token the catalogue lacks is answered as ENGINE_FAILED/INTERNAL, with
// an error log record naming the token, rather than fail every validating
// client.
//
// Domain errors, including bad arguments, are always isError results built
// from *server.Error; the handler never returns a Go error for them, so no
// raw error text reaches the model. A cancelled request and malformed
// JSON-RPC stay protocol errors, answered by the transport; a request the
// client cancelled is not answered at all, and its completion record says
// CANCELLED with the client's reason.
//
// Writable and read-only sets are advertised on four surfaces: the server
// instructions, both tool descriptions (surfaces.go), and the readOnly and
// writable arrays of every result. With neither set configured every
// surface is byte for byte the spec's.
package mcpserver
