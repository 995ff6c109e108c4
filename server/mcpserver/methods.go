package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"
)

// request is one JSON-RPC request (it has an ID) as read off the wire.
type request struct {
	id     any
	method mcp.MCPMethod
	raw    []byte
}

// era is the protocol era of one request. From 2026-07-28 a request names
// its protocol version and client capabilities in params._meta, and there
// is no initialize handshake (SEP-2575); without that it is legacy.
type era struct {
	modern bool
}

// methodRule is how a method the server does not serve is refused, in
// mcp-go's words: removed in the modern era, not yet in the legacy one, or
// a capability this server does not have.
type methodRule struct {
	removedInModern bool
	modernOnly      bool
	capability      string // "resources not supported" when set
}

var methodRules = map[mcp.MCPMethod]methodRule{
	mcp.MethodInitialize:             {removedInModern: true},
	mcp.MethodPing:                   {removedInModern: true},
	mcp.MethodServerDiscover:         {modernOnly: true},
	mcp.MethodSubscriptionsListen:    {modernOnly: true},
	mcp.MethodToolsList:              {},
	mcp.MethodToolsCall:              {},
	mcp.MethodSetLogLevel:            {removedInModern: true, capability: "logging"},
	mcp.MethodResourcesList:          {capability: "resources"},
	mcp.MethodResourcesTemplatesList: {capability: "resources"},
	mcp.MethodResourcesRead:          {capability: "resources"},
	mcp.MethodResourcesSubscribe:     {removedInModern: true, capability: "resources"},
	mcp.MethodResourcesUnsubscribe:   {removedInModern: true, capability: "resources"},
	mcp.MethodPromptsList:            {capability: "prompts"},
	mcp.MethodPromptsGet:             {capability: "prompts"},
	mcp.MethodTasksGet:               {capability: "tasks"},
	mcp.MethodTasksList:              {removedInModern: true, capability: "tasks"},
	mcp.MethodTasksResult:            {removedInModern: true, capability: "tasks"},
	mcp.MethodTasksCancel:            {capability: "tasks"},
	mcp.MethodCompletionComplete:     {capability: "completions"},
}

// request answers one request. Only tools/call leaves the read loop: every
// other method answers from memory at once.
func (c *conn) request(ctx context.Context, r request) {
	e, err := requestEra(r.raw)
	if err != nil {
		c.protocolError(r.id, err)
		return
	}
	rule, known := methodRules[r.method]
	switch {
	case !known:
		c.writeError(r.id, mcp.METHOD_NOT_FOUND, fmt.Sprintf("Method %s not found", r.method))
		return
	case e.modern && rule.removedInModern:
		c.writeError(r.id, mcp.METHOD_NOT_FOUND, fmt.Sprintf("%q was removed in protocol version %s", r.method, mcp.ProtocolVersion20260728))
		return
	case !e.modern && rule.modernOnly:
		c.writeError(r.id, mcp.METHOD_NOT_FOUND, fmt.Sprintf("%q requires protocol version %s or later", r.method, mcp.ProtocolVersion20260728))
		return
	case rule.capability != "":
		c.writeError(r.id, mcp.METHOD_NOT_FOUND, rule.capability+" not supported")
		return
	}

	switch r.method {
	case mcp.MethodInitialize:
		var req mcp.InitializeRequest
		if c.parse(r, &req) {
			c.writeResult(r.id, mcp.InitializeResult{
				ProtocolVersion: mcp.NegotiateLegacyVersion(req.Params.ProtocolVersion),
				Capabilities:    capabilities(),
				ServerInfo:      c.a.implementation(),
				Instructions:    c.a.instructions,
			})
		}
	case mcp.MethodPing:
		var req mcp.PingRequest
		if c.parse(r, &req) {
			c.writeResult(r.id, mcp.EmptyResult{})
		}
	case mcp.MethodServerDiscover:
		var req mcp.DiscoverRequest
		if c.parse(r, &req) {
			res := &mcp.DiscoverResult{
				SupportedVersions: mcp.ValidProtocolVersions,
				Capabilities:      capabilities(),
				Instructions:      c.a.instructions,
			}
			c.a.decorate(&res.Result, e)
			res.SetCacheHints(0, mcp.CacheScopePrivate)
			c.writeResult(r.id, res)
		}
	case mcp.MethodSubscriptionsListen:
		var req mcp.SubscriptionsListenRequest
		if c.parse(r, &req) {
			c.subscriptionsListen(r.id, e)
		}
	case mcp.MethodToolsList:
		var req mcp.ListToolsRequest
		if c.parse(r, &req) {
			c.listTools(r.id, e, req.Params.Cursor)
		}
	case mcp.MethodToolsCall:
		var req mcp.CallToolRequest
		if c.parse(r, &req) {
			c.callTool(ctx, r.id, e, req)
		}
	}
}

// parse decodes the whole request into its mcp type; a request that does
// not decode is an invalid request.
func (c *conn) parse(r request, into any) bool {
	if err := json.Unmarshal(r.raw, into); err != nil {
		c.writeError(r.id, mcp.INVALID_REQUEST, fmt.Sprintf("unparsable %s request: %s", r.method, err))
		return false
	}
	return true
}

// errMissingCapabilities is a modern request without client capabilities.
var errMissingCapabilities = errors.New("missing or invalid _meta field " + mcp.MetaKeyClientCapabilities)

// requestEra reads params._meta. A modern request must declare its client
// capabilities and a protocol version this server knows.
func requestEra(raw []byte) (era, error) {
	var w struct {
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return era{}, nil // the method's own decode reports it
	}
	version := w.Params.Meta.ProtocolVersion()
	if !mcp.IsModernProtocol(version) {
		return era{}, nil
	}
	if w.Params.Meta.ClientCapabilities() == nil {
		return era{}, errMissingCapabilities
	}
	if !mcp.IsValidProtocolVersion(version) {
		return era{}, mcp.UnsupportedProtocolVersionError{Version: version, Supported: mcp.ValidProtocolVersions}
	}
	return era{modern: true}, nil
}

func (c *conn) protocolError(id any, err error) {
	var unsupported mcp.UnsupportedProtocolVersionError
	if errors.As(err, &unsupported) {
		resp := unsupported.JSONRPCError()
		resp.ID = mcp.NewRequestId(id)
		c.write(resp)
		return
	}
	c.writeError(id, mcp.INVALID_PARAMS, err.Error())
}

// capabilities is tools only; the tool list never changes while the
// process runs.
func capabilities() mcp.ServerCapabilities {
	return mcp.ServerCapabilities{Tools: &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{}}
}

func (a *Adapter) implementation() mcp.Implementation {
	return mcp.Implementation{Name: ImplementationName, Version: a.version}
}

// decorate stamps what a modern result must carry: its type and the
// server's identity. Legacy results stay as they were.
func (a *Adapter) decorate(r *mcp.Result, e era) {
	if !e.modern {
		return
	}
	if r.GetResultType() == "" {
		r.SetResultType(mcp.ResultTypeComplete)
	}
	if meta := r.EnsureResultMeta(); meta.ServerInfo() == nil {
		meta.SetServerInfo(a.implementation())
	}
}

// listTools serves tools/list, sorted by name. The cursor is mcp-go's:
// the base64 name of the last tool seen; there is one page.
func (c *conn) listTools(id any, e era, cursor mcp.Cursor) {
	tools := c.a.tools
	if cursor != "" {
		last, err := base64.StdEncoding.DecodeString(string(cursor))
		if err != nil {
			c.writeError(id, mcp.INVALID_PARAMS, err.Error())
			return
		}
		tools = tools[sort.Search(len(tools), func(i int) bool { return tools[i].Name > string(last) }):]
	}
	res := &mcp.ListToolsResult{Tools: tools}
	if e.modern {
		c.a.decorate(&res.Result, e)
		res.SetCacheHints(0, mcp.CacheScopePrivate)
	}
	c.writeResult(id, res)
}

// subscriptionsListen acknowledges an empty subscription and closes the
// stream at once: this server never sends a list-changed notification, so
// there is nothing to subscribe to.
func (c *conn) subscriptionsListen(id any, e era) {
	c.write(mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: mcp.MethodNotificationSubscriptionsAcknowledged,
			Params: mcp.NotificationParams{
				Meta:             map[string]any{mcp.MetaKeySubscriptionID: id},
				AdditionalFields: map[string]any{"notifications": mcp.SubscriptionFilter{}},
			},
		},
	})
	res := &mcp.SubscriptionsListenResult{}
	res.EnsureResultMeta().SetSubscriptionID(id)
	c.a.decorate(&res.Result, e)
	c.writeResult(id, res)
}

// callTool runs a tool on its own goroutine, so a long commit does not hold
// up pings, listings or a cancellation. A handler error (only
// cancellation) is a protocol error, as the spec requires.
func (c *conn) callTool(ctx context.Context, id any, e era, req mcp.CallToolRequest) {
	h, ok := c.a.handlers[req.Params.Name]
	if !ok {
		c.writeError(id, mcp.INVALID_PARAMS, fmt.Sprintf("tool '%s' not found: tool not found", req.Params.Name))
		return
	}
	c.startCall(ctx, id, func(ctx context.Context) {
		res, err := h(ctx, req)
		switch {
		case err != nil:
			c.writeError(id, mcp.INTERNAL_ERROR, err.Error())
			return
		case res == nil: // mcp-go's answer; our handlers always build one
			c.writeError(id, mcp.INTERNAL_ERROR, fmt.Sprintf("tool '%s' handler returned no result", req.Params.Name))
			return
		}
		c.a.decorate(&res.Result, e)
		c.writeResult(id, res)
	})
}
