package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// conn is one stdio connection: the read loop, the tool calls in flight,
// and the writer they share. Methods are dispatched in methods.go.
type conn struct {
	a   *Adapter
	out io.Writer

	writeMu sync.Mutex // one message per Write, never interleaved

	calls    sync.WaitGroup // tool calls in flight
	mu       sync.Mutex
	inflight map[string]*inflightCall // by cancelKey of the request ID
}

// inflightCall is the cancel function of one tool call; its address tells
// two calls that reuse one request ID apart.
type inflightCall struct{ cancel context.CancelFunc }

// Serve speaks MCP JSON-RPC on in/out until in ends or ctx is cancelled.
// out carries only protocol messages; the transport's own errors go to
// the logger. Either way it stops reading, waits for the tool calls in
// flight (a commit may be publishing; ctx cancellation reaches them, EOF
// does not), and returns nil; only a read error other than EOF is
// returned.
func (a *Adapter) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	a.log.Info("serving", "dir", a.scrub.text(a.dir), "writable", entries(a.sets.writable), "readOnly", entries(a.sets.readOnly))
	c := &conn{a: a, out: out, inflight: map[string]*inflightCall{}}
	defer c.calls.Wait()

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	// The reader runs apart so that ctx cancellation does not wait for a
	// read that may never return (a terminal's stdin); that goroutine ends
	// with the process.
	go func() {
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadBytes('\n')
			// mcp-go drops a last line without its newline; an answer
			// costs nothing and a client that closes early still gets one.
			if len(line) > 0 {
				select {
				case lines <- line:
				case <-stop:
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()

	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			c.transportError("read input", err)
			return err
		case line := <-lines:
			c.handle(ctx, line)
		}
	}
}

// handle answers one line, the way mcp-go v1.2.1's StdioServer and
// MCPServer.HandleMessage do: the envelope checks first, then
// notifications, then the request by method.
func (c *conn) handle(ctx context.Context, line []byte) {
	var id any
	defer func() {
		// As in mcp-go: a bug answering one message must not end the
		// process, and a request still gets an answer.
		if p := recover(); p != nil {
			c.transportError("answer message", fmt.Errorf("panic: %v", p))
			if id != nil {
				c.writeError(id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", p))
			}
		}
	}()
	if !json.Valid(line) {
		c.writeError(nil, mcp.PARSE_ERROR, "Parse error")
		return
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		ID      any             `json:"id,omitempty"`
		Result  any             `json:"result,omitempty"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		// Valid JSON of the wrong shape: a batch, a scalar, a non-string
		// method. Batches are not part of MCP since 2025-06-18.
		c.writeError(nil, mcp.PARSE_ERROR, "Failed to parse message")
		return
	}
	if msg.JSONRPC != mcp.JSONRPC_VERSION {
		c.writeError(msg.ID, mcp.INVALID_REQUEST, "Invalid JSON-RPC version")
		return
	}
	if msg.ID == nil {
		c.notification(line)
		return
	}
	id = msg.ID
	if msg.Result != nil {
		return // a response to a request of ours; we send none
	}
	c.request(ctx, request{id: msg.ID, method: mcp.MCPMethod(msg.Method), raw: line})
}

// notification handles a message without ID: only cancellation has an
// effect, and none is answered unless it does not parse.
func (c *conn) notification(line []byte) {
	var n mcp.JSONRPCNotification
	if err := json.Unmarshal(line, &n); err != nil {
		c.writeError(nil, mcp.PARSE_ERROR, "Failed to parse notification")
		return
	}
	if n.Method != string(mcp.MethodNotificationCancelled) {
		return
	}
	id, ok := n.Params.AdditionalFields["requestId"]
	if !ok {
		return
	}
	c.mu.Lock()
	call := c.inflight[cancelKey(id)]
	c.mu.Unlock()
	if call != nil {
		call.cancel()
	}
}

// cancelKey identifies a request ID as decoded into an any, so the number
// 7 in a request and in notifications/cancelled meet.
func cancelKey(id any) string { return fmt.Sprintf("%T:%v", id, id) }

// startCall runs fn on its own goroutine with a context that
// notifications/cancelled for id cancels.
func (c *conn) startCall(ctx context.Context, id any, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	call := &inflightCall{cancel: cancel}
	key := cancelKey(id)
	c.mu.Lock()
	c.inflight[key] = call
	c.mu.Unlock()
	c.calls.Go(func() {
		defer func() {
			c.mu.Lock()
			if c.inflight[key] == call {
				delete(c.inflight, key)
			}
			c.mu.Unlock()
			cancel()
		}()
		fn(ctx)
	})
}

// writeResult sends a result response.
func (c *conn) writeResult(id any, result any) {
	c.write(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), result))
}

// writeError sends an error response; id nil goes out as null.
func (c *conn) writeError(id any, code int, message string) {
	c.write(mcp.JSONRPCError{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(id),
		Error:   mcp.NewJSONRPCErrorDetails(code, message, nil),
	})
}

// write sends one message as one line. A failed write is logged: there is
// no one else to tell, and the next read will see the peer gone.
func (c *conn) write(msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		c.transportError("encode response", err)
		return
	}
	b = append(b, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.out.Write(b); err != nil {
		c.transportError("write response", err)
	}
}

func (c *conn) transportError(what string, err error) {
	c.a.log.Error("transport", "detail", c.a.scrub.text(what+": "+err.Error()))
}
