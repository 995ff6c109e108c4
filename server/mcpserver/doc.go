// Package mcpserver is the MCP adapter: it exposes the notebook engine to
// agents as exactly two tools, notes_pull and notes_commit, over stdio.
// spec/mcp-tools.md is normative for every byte an agent sees; this
// package is the only place that knows it.
//
// # Transport
//
// The stdio JSON-RPC 2.0 loop is our own (jsonrpc.go, methods.go); only the
// wire types come from mark3labs/mcp-go/mcp, so the encoding stays the
// library's. Its server package is not linked: its schema validator alone
// cost every slivingdoc process, pull and merge-file included, ~5 ms of
// package init. The loop mirrors mcp-go v1.2.1's answers byte for byte
// (testdata/jsonrpc/mcpgo-v1.2.1.txtar is mcp-go's recorded reply to each
// of 87 request lines, replayed by the conformance test):
//
//	stdin ─▶ reader goroutine: one message per '\n'-terminated line
//	  ─▶ conn.handle                     not JSON: -32700 "Parse error", id null
//	                                     batch, wrong shape: -32700, id null
//	                                     jsonrpc != "2.0": -32600
//	     ├─ no id: notification          no reply; notifications/cancelled
//	     │                               cancels that request's context
//	     ├─ id and result: a response    ignored (we send no requests)
//	     └─ request ─▶ requestEra        params._meta protocol version
//	                                     >= 2026-07-28 is the modern era
//	          ─▶ methodRules             removed / modern-only / no such
//	                                     capability / unknown: -32601
//	          ─▶ initialize, ping, server/discover, subscriptions/listen,
//	             tools/list              answered at once from memory
//	          ─▶ tools/call              own goroutine, cancellable ctx;
//	                                     unknown tool -32602, cancelled -32603
//	  ─▶ conn.write                      one marshalled line per Write,
//	                                     serialised by a mutex
//
// Modern-era results carry resultType and the server's identity in _meta,
// and list results cache hints, as mcp-go adds them. At stdin EOF or ctx
// cancellation the loop stops reading and waits for the tool calls in
// flight (a commit may be publishing) before Serve returns nil; ctx
// cancellation reaches those calls, EOF does not.
//
// Deliberate differences from mcp-go: EOF does not cancel the calls in
// flight (mcp-go cancels them); a last line without '\n' is answered (mcp-go
// drops it); a cancellation that arrives before its call's goroutine runs
// still counts; and the string ID "7" and the number 7 are different
// requests to notifications/cancelled.
//
// # Tool calls
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
// JSON-RPC stay protocol errors, answered by the transport.
//
// Writable and read-only sets are advertised on four surfaces: the server
// instructions, both tool descriptions (surfaces.go), and the readOnly and
// writable arrays of every result. With neither set configured every
// surface is byte for byte the spec's.
package mcpserver
