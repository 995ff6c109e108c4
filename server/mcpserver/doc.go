// Package mcpserver is the MCP adapter: it exposes the notebook engine to
// agents as exactly two tools, notes_pull and notes_commit, over stdio.
// spec/mcp-tools.md is normative for every byte an agent sees; this
// package is the only place that knows it.
//
// # Transport
//
// The protocol is this package's own and links no MCP library: mcp-go's
// server package links a JSON-schema compiler that compiles its
// meta-schemas at package init, the official Go SDK a schema package and
// more, and every slivingdoc process, CLI commands included, would pay
// that initialisation (docs/benchmarks.md). One reader answers every
// message (conn.go: reading, envelope, calls in flight, shutdown;
// protocol.go: lifecycle, methods, both protocol eras, tools/list,
// tools/call dispatch). It answers as mark3labs/mcp-go v1.2.1 did when it
// served here, except where that library broke MCP or JSON-RPC:
// conformance_test.go replays the library's recorded answers byte for
// byte and names each deliberate difference (deviations).
//
//	stdin ─▶ conn.readLoop: one message per '\n' line, at most MaxLineBytes
//	  │        longer: -32600, its id when the kept prefix names one
//	  ├─ scanEnvelope: top-level members as byte spans of the line
//	  │    id null, bool, object, fraction, twice: -32600, id null
//	  │    a response (result/error, no method): dropped, we send no requests
//	  │    notifications/cancelled: the tool call by that id is marked
//	  │      cancelled (no response will be sent), its engine context
//	  │      cancelled with the client's reason
//	  └─ handle ─▶ request: initialize (clientInfo kept for the author),
//	               ping, tools/list, server/discover, ..., tools/call
//	     params that do not decode: -32602, no Go decoder text
//	     no method, a tools/list cursor we did not issue: our message
//	every response ─▶ response(): the client's id spliced in byte for byte
//	  (ids above 2^53 intact) ─▶ writeOut ─▶ stdout; the first failed write
//	  ends serving
//
// Ids are never rewritten: the calls in flight are found by the client's
// own id (the latest call, when a client reuses one).
//
// End of input, ctx cancellation (SIGTERM, SIGHUP, SIGINT in serve) and a
// closed stdout all end the same way: no further line is answered, Serve
// waits for the calls in flight, whose engine contexts end of input does
// not cancel, so a commit finishes; ShutdownGrace after input ended they
// are cancelled. Serve then returns nil.
//
// Left as mcp-go answered (pinned by the recording): a blank line or a
// batch is -32700 with id null. Tool calls run on goroutines of their own,
// at most 64 at once; beyond that the read loop waits for one to end, so
// a host that keeps more than 64 calls in flight slows its own reads.
//
// # Tool calls
//
//	conn.callTool ─▶ handler: engine context (conn.begin) carrying the
//	                     author (server.WithAuthor), fresh diagnostic ID
//	                     (diag.NewID), start log record
//	  ─▶ decodeArgs(params.arguments)      strict: unknown, duplicate, null,
//	                                       wrong type, byte bounds, U+0000,
//	                                       lone surrogates, blank message,
//	                                       ~/ and absolute path
//	  ─▶ Engine.Pull / Engine.Commit       (*diag.Error on domain failure)
//	  ─▶ okResult  | diag.NewEnvelope      structured object, fields in spec order
//	  ─▶ okText    | Envelope.Text         the text item (directory | candid report)
//	  ─▶ diag.Scrubber                     the one scrub policy, on every diagnostic text
//	  ─▶ completion log record (same mcpReqID = diagnosticId)
//
// The engine context carries the author the call claims (server/author's
// rules): the client's clientInfo, from initialize or, in the modern
// protocol, the request's own _meta, with the Claim of the process
// (Options.Author: --author, SLIVINGDOC_AUTHOR, user and host). The
// engine records it; no result shows it.
//
// Both tools advertise outputSchema (schema.go): the success object or the
// structured error, since clients validate structuredContent either way;
// the error's tokens are enums built from diag.Catalog. An envelope with
// a token the catalogue lacks is answered as ENGINE_FAILED/INTERNAL, with
// an error log record naming the token, rather than fail every validating
// client.
//
// Domain errors, including bad arguments, are always isError results built
// from *diag.Error; the handler never returns a Go error for them, so no
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
