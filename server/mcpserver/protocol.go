package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
	"github.com/slivingdoc/slivingdoc/server"
)

// The MCP methods this server serves, here rather than in an SDK's server
// package. Go runs every linked package's initialisation in every process,
// and one binary serves every command: mcp-go's server package links a
// JSON-schema compiler that compiles its meta-schemas at init (6-7 ms a
// process), and the official Go SDK, or mcp-go's types alone, link schema
// packages that cost more than half of a Go hello world
// (docs/benchmarks.md). This server needs no schema work: its tools have
// two closed inputs, decoded strictly by decode.go, and results it builds
// itself. The answers are those of mark3labs/mcp-go v1.2.1, which served
// here before, except where that library broke JSON-RPC or MCP (ids it
// should have refused, Go decoder text in errors, responses it should not
// have sent); testdata/jsonrpc/mcpgo-v1.2.1.txtar is its recording and
// conformance_test.go replays it byte for byte, naming each deliberate
// difference.

// Protocol versions, newest first. From 2026-07-28 a request names its
// version and the client's capabilities in params._meta and there is no
// initialize handshake ("modern"); before, "legacy".
var protocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

const (
	firstModernVersion = "2026-07-28"
	latestLegacy       = "2025-11-25"
	// unnamedVersion is what initialize assumes of a client that names no
	// version (MCP's rule for a client that cannot say).
	unnamedVersion = "2025-03-26"

	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID  = "io.modelcontextprotocol/subscriptionId"
	metaClientInfo      = "io.modelcontextprotocol/clientInfo"
)

// JSON-RPC error codes, and MCP's for an unsupported protocol version.
const (
	codeParseError         = -32700
	codeInvalidRequest     = -32600
	codeMethodNotFound     = -32601
	codeInvalidParams      = -32602
	codeInternalError      = -32603
	codeUnsupportedVersion = -32022
)

// The wire types. Field order is the order on the wire, which the golden
// files and the recording pin.

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type toolAnnotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// tool is one entry of tools/list; its members are in name order, as
// mcp-go sent them.
type tool struct {
	Annotations  toolAnnotations `json:"annotations"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	Name         string          `json:"name"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// resultMeta is a modern result's _meta.
type resultMeta struct {
	ServerInfo     *implementation `json:"io.modelcontextprotocol/serverInfo,omitempty"`
	SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId,omitempty"`
}

// modernHeader is what every modern result starts with; cache hints only
// on the results that can be cached (tools/list, server/discover).
type modernHeader struct {
	Meta       *resultMeta `json:"_meta,omitempty"`
	ResultType string      `json:"resultType,omitempty"`
}

type cacheHints struct {
	TTLMs      *int   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// callResult is a tools/call result; members in name order.
type callResult struct {
	Meta              *resultMeta   `json:"_meta,omitempty"`
	Content           []textContent `json:"content"`
	IsError           bool          `json:"isError,omitempty"`
	ResultType        string        `json:"resultType,omitempty"`
	StructuredContent any           `json:"structuredContent"`
}

type capabilities struct {
	Tools struct{} `json:"tools"`
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    capabilities   `json:"capabilities"`
	ServerInfo      implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions"`
}

type listToolsResult struct {
	modernHeader
	cacheHints
	Tools []tool `json:"tools"`
}

type discoverResult struct {
	modernHeader
	cacheHints
	SupportedVersions []string     `json:"supportedVersions"`
	Capabilities      capabilities `json:"capabilities"`
	Instructions      string       `json:"instructions"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// toolHandler runs one tool call under the call's engine context. A Go
// error (only a cancelled call) is a protocol error.
type toolHandler func(ctx context.Context, args json.RawMessage) (*callResult, error)

// message is what handle decodes of a line; the id is scanEnvelope's
// byte span, echoed as it came.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Params  json.RawMessage `json:"params"`
}

// present is false for an absent member and for null.
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// handle answers one line: the envelope checks, then notifications (only
// a cancellation has an effect), then the request. A panic is answered as
// an internal error, and the server goes on.
func (c *conn) handle(line []byte) {
	var id json.RawMessage
	defer func() {
		if r := recover(); r != nil {
			c.a.log.Error("transport", "detail", c.a.scrub.Text(fmt.Sprintf("panic answering a message: %v", r)))
			if id != nil {
				c.writeError(id, codeInternalError, "internal error")
			}
		}
	}()
	// The envelope first, from the line's own bytes: JSON-RPC allows a
	// string or integer id, once; MCP ids are never null.
	if env, ok := scanEnvelope(line); ok {
		switch {
		case env.ids == 0 && env.method == "notifications/cancelled":
			c.cancelNotification(env.params)
			return
		case env.ids > 1:
			c.refuse(nil, msgDupID)
			return
		case env.ids == 1 && env.response && !env.hasMethod:
			return // a response to a request of ours; we send none
		case env.ids == 1:
			if _, valid := idKey(env.id); !valid {
				c.refuse(nil, msgInvalidID)
				return
			}
			id = env.id
		}
	}
	if !json.Valid(line) {
		c.writeError(nil, codeParseError, "Parse error")
		return
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		// Valid JSON of another shape: a batch, a scalar, a method that
		// is not a string.
		c.writeError(nil, codeParseError, "Failed to parse message")
		return
	}
	if m.JSONRPC != "2.0" {
		c.writeError(id, codeInvalidRequest, "Invalid JSON-RPC version")
		return
	}
	if id == nil {
		if present(m.Params) && !isObject(m.Params) {
			c.writeError(nil, codeParseError, "Failed to parse notification")
		}
		return
	}
	if present(m.Result) {
		return // a response to a request of ours; we send none
	}
	c.request(id, m.Method, m.Params)
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// methodRule says how a method the server does not serve is refused:
// removed in the modern era, not yet in the legacy one, or a capability
// this server does not have.
type methodRule struct {
	removedInModern bool
	modernOnly      bool
	capability      string // "<capability> not supported"
}

// methodRules is every method's rule, built when serve reads its first
// request: a package-level map literal is built before main in every
// process.
func methodRules() map[string]methodRule { return methodRulesOnce.Get(makeMethodRules) }

var methodRulesOnce noinit.Lazy[map[string]methodRule]

func makeMethodRules() map[string]methodRule {
	return map[string]methodRule{
		"initialize":               {removedInModern: true},
		"ping":                     {removedInModern: true},
		"server/discover":          {modernOnly: true},
		"subscriptions/listen":     {modernOnly: true},
		"tools/list":               {},
		"tools/call":               {},
		"logging/setLevel":         {removedInModern: true, capability: "logging"},
		"resources/list":           {capability: "resources"},
		"resources/templates/list": {capability: "resources"},
		"resources/read":           {capability: "resources"},
		"resources/subscribe":      {removedInModern: true, capability: "resources"},
		"resources/unsubscribe":    {removedInModern: true, capability: "resources"},
		"prompts/list":             {capability: "prompts"},
		"prompts/get":              {capability: "prompts"},
		"tasks/get":                {capability: "tasks"},
		"tasks/list":               {removedInModern: true, capability: "tasks"},
		"tasks/result":             {removedInModern: true, capability: "tasks"},
		"tasks/cancel":             {capability: "tasks"},
		"completion/complete":      {capability: "completions"},
	}
}

// request answers one request. Only tools/call leaves the read loop; every
// other method answers from memory at once.
func (c *conn) request(id json.RawMessage, method string, params json.RawMessage) {
	modern, eraErr := requestEra(params)
	if eraErr != nil {
		c.writeErr(id, eraErr)
		return
	}
	rule, known := methodRules()[method]
	switch {
	case method == "":
		c.writeError(id, codeMethodNotFound, msgNoMethod)
		return
	case !known:
		c.writeError(id, codeMethodNotFound, fmt.Sprintf("Method %s not found", method))
		return
	case modern && rule.removedInModern:
		c.writeError(id, codeMethodNotFound, fmt.Sprintf("%q was removed in protocol version %s", method, firstModernVersion))
		return
	case !modern && rule.modernOnly:
		c.writeError(id, codeMethodNotFound, fmt.Sprintf("%q requires protocol version %s or later", method, firstModernVersion))
		return
	case rule.capability != "":
		c.writeError(id, codeMethodNotFound, rule.capability+" not supported")
		return
	}

	switch method {
	case "initialize":
		var in struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if c.parse(id, method, params, &in) {
			var w struct {
				ClientInfo json.RawMessage `json:"clientInfo"`
			}
			_ = json.Unmarshal(params, &w)
			c.mu.Lock()
			c.client = clientInfoOf(w.ClientInfo)
			c.mu.Unlock()
			c.writeResult(id, initializeResult{
				ProtocolVersion: negotiateLegacy(in.ProtocolVersion),
				ServerInfo:      c.a.implementation(),
				Instructions:    c.a.instructions,
			})
		}
	case "ping":
		var in struct{}
		if c.parse(id, method, params, &in) {
			c.writeResult(id, struct{}{})
		}
	case "server/discover":
		var in struct{}
		if c.parse(id, method, params, &in) {
			c.writeResult(id, discoverResult{
				modernHeader:      c.a.modernHeader(nil),
				cacheHints:        privateUncached(),
				SupportedVersions: protocolVersions,
				Instructions:      c.a.instructions,
			})
		}
	case "subscriptions/listen":
		var in struct{}
		if c.parse(id, method, params, &in) {
			c.subscriptionsListen(id)
		}
	case "tools/list":
		var in struct {
			Cursor string `json:"cursor"`
		}
		if c.parse(id, method, params, &in) {
			c.listTools(id, modern, in.Cursor)
		}
	case "tools/call":
		var in struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if c.parse(id, method, params, &in) {
			var w struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			_ = json.Unmarshal(params, &w)
			var client *implementation
			if ci := clientInfoOf(w.Meta[metaClientInfo]); ci != (implementation{}) {
				client = &ci
			}
			c.callTool(id, modern, in.Name, in.Arguments, client)
		}
	}
}

// parse decodes a request's params; params that do not decode are invalid
// params.
func (c *conn) parse(id json.RawMessage, method string, params json.RawMessage, into any) bool {
	if len(params) == 0 {
		return true
	}
	if err := json.Unmarshal(params, into); err != nil {
		// Go's decoder text names our types, not the client's mistake.
		c.writeError(id, codeInvalidParams, fmt.Sprintf(msgParams, boundText(method, 64)))
		return false
	}
	return true
}

// requestEra reads params._meta: a request naming a modern version must
// declare its client's capabilities and name a version this server knows.
// Params or a _meta that do not decode leave the request legacy; the
// method's own decoding reports them.
func requestEra(params json.RawMessage) (modern bool, err *rpcError) {
	var w struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &w) != nil {
		return false, nil
	}
	var version string
	if json.Unmarshal(w.Meta[metaProtocolVersion], &version) != nil || version < firstModernVersion {
		return false, nil
	}
	if !isObject(w.Meta[metaClientCaps]) {
		return false, &rpcError{Code: codeInvalidParams, Message: "missing or invalid _meta field " + metaClientCaps}
	}
	if !slices.Contains(protocolVersions, version) {
		return false, &rpcError{
			Code:    codeUnsupportedVersion,
			Message: fmt.Sprintf("unsupported protocol version: %q (supported: %v)", version, protocolVersions),
			Data: struct {
				Supported []string `json:"supported"`
				Requested string   `json:"requested"`
			}{protocolVersions, version},
		}
	}
	return true, nil
}

// negotiateLegacy answers initialize's version: the client's when this
// server speaks it through initialize, else the latest that does.
func negotiateLegacy(v string) string {
	if v == "" {
		v = unnamedVersion
	}
	if v < firstModernVersion && slices.Contains(protocolVersions, v) {
		return v
	}
	return latestLegacy
}

func (a *Adapter) implementation() implementation {
	return implementation{Name: ImplementationName, Version: a.version}
}

// modernHeader is what a modern result carries: its type and the server's
// identity (and the subscription's id, when it is one).
func (a *Adapter) modernHeader(subscription json.RawMessage) modernHeader {
	info := a.implementation()
	return modernHeader{Meta: &resultMeta{ServerInfo: &info, SubscriptionID: subscription}, ResultType: "complete"}
}

// privateUncached are the cache hints of a list: the tools depend on this
// server's configuration, so no client should share or keep them.
func privateUncached() cacheHints {
	zero := 0
	return cacheHints{TTLMs: &zero, CacheScope: "private"}
}

// listTools serves tools/list, sorted by name. The cursor is the base64
// name of the last tool seen, as mcp-go's; there is one page.
func (c *conn) listTools(id json.RawMessage, modern bool, cursor string) {
	tools := c.a.tools
	if cursor != "" {
		last, err := base64.StdEncoding.DecodeString(cursor)
		if err != nil {
			c.writeError(id, codeInvalidParams, msgCursor)
			return
		}
		tools = tools[sort.Search(len(tools), func(i int) bool { return tools[i].Name > string(last) }):]
	}
	res := listToolsResult{Tools: tools}
	if modern {
		res.modernHeader = c.a.modernHeader(nil)
		res.cacheHints = privateUncached()
	}
	c.writeResult(id, res)
}

// subscriptionsListen acknowledges an empty subscription and ends it at
// once: this server never sends a list-changed notification, so there is
// nothing to subscribe to. Both messages carry the request's id as the
// subscription's.
func (c *conn) subscriptionsListen(id json.RawMessage) {
	ack, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", "notifications/subscriptions/acknowledged", struct {
		Meta          resultMeta `json:"_meta"`
		Notifications struct{}   `json:"notifications"`
	}{Meta: resultMeta{SubscriptionID: idPlaceholder}}})
	_ = c.writeOut(withID(append(ack, '\n'), id))
	_ = c.writeOut(withID(response(id, "result", c.a.modernHeader(idPlaceholder)), id))
}

// idPlaceholder stands for a client's id inside a body, where
// encoding/json would re-escape it; withID puts the id's own bytes back.
// No text of ours holds a NUL.
var idPlaceholder = json.RawMessage(`"\u0000id"`)

func withID(msg []byte, id json.RawMessage) []byte {
	return bytes.Replace(msg, idPlaceholder, id, 1)
}

// clientInfoOf reads a client's name and version leniently, from
// initialize's clientInfo or a modern request's _meta: they only label
// commits (the author), so what does not decode is no clientInfo, never a
// refusal.
func clientInfoOf(raw json.RawMessage) implementation {
	var ci struct {
		Name    any `json:"name"`
		Version any `json:"version"`
	}
	_ = json.Unmarshal(raw, &ci)
	name, _ := ci.Name.(string)
	version, _ := ci.Version.(string)
	// An author is at most author.MaxBytes; the rest of a longer name is
	// never recorded, so it is not kept either.
	return implementation{Name: prefix(name, 1024), Version: prefix(version, 1024)}
}

func prefix(s string, n int) string { return s[:min(len(s), n)] }

// clientInfo is the client a call is made for: the one its own request
// names (modern protocol), else the one initialize named.
func (c *conn) clientInfo(client *implementation) implementation {
	if client != nil {
		return *client
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.client
}

// authorFor is authorText, cleaned once per client rather than per call
// (cleaning runs the scrubber's expressions, ~20 µs). A connection has one
// client, or a few in the modern protocol; the bound is for a hostile one.
func (c *conn) authorFor(client implementation) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.authors[client]; ok {
		return s
	}
	if len(c.authors) >= 16 {
		clear(c.authors)
	}
	s := c.a.authorText(client)
	c.authors[client] = s
	return s
}

// callTool runs a tool on a goroutine of its own, so that a long commit
// holds up neither pings, listings nor cancellations; with toolWorkers
// calls running, the read loop waits for one to end. The response goes
// out unless the client cancelled the call.
func (c *conn) callTool(id json.RawMessage, modern bool, name string, args json.RawMessage, client *implementation) {
	h, ok := c.a.handlers[name]
	if !ok {
		c.writeError(id, codeInvalidParams, fmt.Sprintf("tool '%s' not found: tool not found", name))
		return
	}
	c.slots <- struct{}{}
	// The engine records the author; no result shows it.
	cl, ctx := c.begin(id, server.WithAuthor(context.Background(), c.authorFor(c.clientInfo(client))))
	c.calls.Go(func() {
		defer func() { <-c.slots }()
		res, err := h(ctx, args)
		switch {
		case err != nil:
			c.finish(cl, response(id, "error", &rpcError{Code: codeInternalError, Message: err.Error()}))
			return
		case res == nil: // the adapter's handlers always build one
			c.finish(cl, response(id, "error", &rpcError{Code: codeInternalError, Message: fmt.Sprintf("tool '%s' returned no result", name)}))
			return
		}
		if modern {
			hdr := c.a.modernHeader(nil)
			res.Meta, res.ResultType = hdr.Meta, hdr.ResultType
		}
		c.finish(cl, response(id, "result", res))
	})
}

func (c *conn) writeResult(id json.RawMessage, result any) {
	_ = c.writeOut(response(id, "result", result))
}

func (c *conn) writeError(id json.RawMessage, code int, msg string) {
	c.writeErr(id, &rpcError{Code: code, Message: msg})
}

// writeErr sends an error response; a nil id goes out as null. A failed
// write needs no report here: writeOut ends serving.
func (c *conn) writeErr(id json.RawMessage, e *rpcError) {
	_ = c.writeOut(response(id, "error", e))
}
