package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A conn is one Serve: it reads the client's lines, refuses what JSON-RPC
// and MCP do not allow, answers the rest (protocol.go), tracks the tool
// calls in flight by the client's own ids, and writes every answer with
// the id the client sent, byte for byte. doc.go has the picture.

// MaxLineBytes bounds one input message. Tool inputs are at most ~20 KiB
// (4,096-byte path, 16,384-byte message), so 4 MiB leaves room for any
// escaping and metadata while a hostile line cannot exhaust memory.
const MaxLineBytes = 4 << 20

// ShutdownGrace is how long tool calls in flight may run on after input
// ends (EOF, SIGTERM, SIGHUP, a closed stdout) before they are cancelled.
// A commit normally takes milliseconds; the engine keeps its state
// consistent when cancelled, so this only bounds the wait.
var ShutdownGrace = 10 * time.Second

// toolWorkers bounds the tool calls running at once; with that many
// running, the read loop waits for one to end.
const toolWorkers = 64

// Refusals whose wording is ours; the codes are JSON-RPC's.
const (
	msgInvalidID = "Invalid Request: id must be a string or an integer"
	msgDupID     = "Invalid Request: id appears more than once"
	msgTooLarge  = "Invalid Request: the message exceeds 4,194,304 bytes"
	msgParams    = "Invalid params: the %s request does not match its schema"
	msgNoMethod  = "Method not found: the request has no method"
	msgCursor    = "Invalid params: the cursor is not one this server issued; list from the start without a cursor"
)

// errShutdown cancels the tool calls still running ShutdownGrace after
// input ended.
var errShutdown = errors.New("request cancelled: the server is shutting down")

// clientCancel is the cause of a call the client cancelled.
type clientCancel struct{ reason string }

func (c clientCancel) Error() string { return "request cancelled by the client: " + c.reason }

// call is one tool call in flight.
type call struct {
	key       string // idKey of the client's id
	cancelled bool   // by the client: its response is dropped
	reason    string // the client's reason, bounded
	cancel    context.CancelCauseFunc
}

type conn struct {
	a   *Adapter
	out io.Writer

	outMu     sync.Mutex
	outClosed chan struct{} // closed when stdout fails
	closeOut  sync.Once

	// readMu is held while one line is answered; stopping takes it, so no
	// call starts once Serve waits for the calls in flight.
	readMu  sync.Mutex
	stopped bool
	calls   sync.WaitGroup
	slots   chan struct{} // one per tool call running

	mu       sync.Mutex
	byID     map[string]*call   // idKey -> the latest call with that id
	running  map[*call]struct{} // every call in flight, for the grace period
	graceOut bool               // grace over: calls are cancelled
	client   implementation     // initialize's clientInfo, for the author
	authors  map[implementation]string
}

func newConn(a *Adapter, out io.Writer) *conn {
	return &conn{a: a, out: out, outClosed: make(chan struct{}), slots: make(chan struct{}, toolWorkers),
		byID: map[string]*call{}, running: map[*call]struct{}{}, authors: map[implementation]string{}}
}

// Serve speaks MCP JSON-RPC on in/out until in ends, ctx is cancelled
// (serve cancels it on SIGTERM, SIGHUP and SIGINT) or out fails. All three
// end the same way as end of input: no more messages are read, the tool
// calls in flight run on (at most ShutdownGrace, then they are cancelled)
// and their responses are written while out works, and Serve returns nil
// (or the error that ended reading in).
func (a *Adapter) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	a.log.Info("serving", "dir", a.scrub.Text(a.dir), "writable", entries(a.sets.writable), "readOnly", entries(a.sets.readOnly))
	c := newConn(a, out)
	readDone := make(chan error, 1)
	go func() { readDone <- c.readLoop(in) }()

	var readErr error
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
		a.log.Info("stopping", "why", "signal")
	case <-c.outClosed:
		a.log.Info("stopping", "why", "stdout closed")
	}
	grace := time.AfterFunc(ShutdownGrace, c.graceOver)
	defer grace.Stop()
	// A read loop blocked on stdin stays blocked; the next line it gets
	// finds the conn stopped and is not answered.
	c.readMu.Lock()
	c.stopped = true
	c.readMu.Unlock()
	c.calls.Wait()
	return readErr
}

// graceOver cancels the calls still running.
func (c *conn) graceOver() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.graceOut = true
	for cl := range c.running {
		cl.cancel(errShutdown)
	}
}

// readLoop answers the client's lines until in ends or Serve stops. It
// returns nil at EOF and the read error otherwise.
func (c *conn) readLoop(in io.Reader) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if tooLong || len(line) > 0 || err == nil { // a blank line is a parse error
			if !c.answer(line, tooLong) {
				return nil
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			c.a.log.Warn("transport", "detail", c.a.scrub.Text("read input: "+err.Error()))
			return err
		}
	}
}

// answer answers one line unless Serve has stopped; false when it has.
func (c *conn) answer(line []byte, tooLong bool) bool {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if c.stopped {
		return false
	}
	if tooLong {
		c.refuse(idFromPrefix(line), msgTooLarge)
	} else {
		c.handle(line)
	}
	return true
}

// readLine returns one line without its '\n'. A line longer than
// MaxLineBytes is read to its end but only its first MaxLineBytes kept,
// with tooLong set. A last line without '\n' is still a line.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxLineBytes+1 { // +1: the '\n'
				line = append(line, chunk[:min(max(MaxLineBytes-len(line), 0), len(chunk))]...)
				tooLong = true
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !tooLong {
			line = bytes.TrimSuffix(line, []byte("\n"))
		}
		return line, tooLong, err
	}
}

// envelope is a message's top-level members, as byte spans of the line.
type envelope struct {
	id        []byte // raw id value; nil when absent
	ids       int
	method    string
	hasMethod bool
	response  bool // has result or error
	params    []byte
}

// scanEnvelope reads the top-level members of one JSON object. ok is false
// for anything that is not a well-formed object.
func scanEnvelope(line []byte) (env envelope, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return env, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return env, false
		}
		key, _ := tok.(string)
		start := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return env, false
		}
		end := int(dec.InputOffset())
		// The span holds the ':' and blanks before the value.
		for start < end && (line[start] == ':' || line[start] == ' ' || line[start] == '\t' || line[start] == '\r' || line[start] == '\n') {
			start++
		}
		switch key {
		case "id":
			env.ids++
			env.id = line[start:end]
		case "method":
			env.hasMethod = true
			_ = json.Unmarshal(raw, &env.method)
		case "result", "error":
			env.response = true
		case "params":
			env.params = raw
		}
	}
	if _, err := dec.Token(); err != nil {
		return env, false
	}
	return env, true
}

// idKey is the identity of a valid id: the string's value, or the
// integer's digits (so ids above 2^53 stay distinct). ok is false for any
// other JSON value.
func idKey(raw []byte) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s:" + s, true
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return "n:" + string(raw), true
}

// idFromPrefix finds a valid top-level id in the kept part of an
// over-long line, so its error can still name the request.
func idFromPrefix(prefix []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return nil
		}
		if tok == "id" {
			if _, ok := idKey(raw); ok {
				return raw
			}
			return nil
		}
	}
	return nil
}

// cancelNotification marks the named tool call cancelled (its response
// will be dropped) and cancels its engine context with the client's
// reason. An unknown or finished request is nothing to cancel.
func (c *conn) cancelNotification(params []byte) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    *string         `json:"reason"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	key, ok := idKey(p.RequestID)
	if !ok {
		return
	}
	reason := "no reason given"
	if p.Reason != nil && strings.TrimSpace(*p.Reason) != "" {
		reason = boundText(*p.Reason, 200)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl := c.byID[key]; cl != nil && !cl.cancelled {
		cl.cancelled, cl.reason = true, reason
		cl.cancel(clientCancel{reason})
	}
}

// begin registers a tool call under the client's id and returns its
// engine context: one the client's cancellation and the end of the grace
// period cancel, and not the end of input (a commit in flight should
// finish).
func (c *conn) begin(id []byte, base context.Context) (*call, context.Context) {
	key, _ := idKey(id)
	ctx, cancel := context.WithCancelCause(base)
	cl := &call{key: key, cancel: cancel}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.graceOut {
		cancel(errShutdown)
	}
	// A client that reuses an id cancels its latest call by it.
	c.byID[key] = cl
	c.running[cl] = struct{}{}
	return cl, ctx
}

// finish forgets a call and writes its response, unless the client
// cancelled it: MCP's receivers do not answer a cancelled request.
func (c *conn) finish(cl *call, response []byte) {
	c.mu.Lock()
	delete(c.running, cl)
	if c.byID[cl.key] == cl {
		delete(c.byID, cl.key)
	}
	cancelled := cl.cancelled
	c.mu.Unlock()
	cl.cancel(nil)
	if !cancelled {
		_ = c.writeOut(response)
	}
	if r, ok := c.a.eng.(Replier); ok {
		r.Replied() // the engine's work after its replies starts now
	}
}

// boundText makes client text safe to log: at most limit bytes, control
// characters escaped.
func boundText(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > limit {
		cut := limit
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

// refuse answers a message that breaks JSON-RPC's envelope.
func (c *conn) refuse(id []byte, message string) {
	c.a.log.Warn("message refused", "detail", message)
	c.writeErr(id, &rpcError{Code: codeInvalidRequest, Message: message})
}

// writeOut writes one whole line to stdout. The first failure (a closed
// stdout) ends the server like end of input.
func (c *conn) writeOut(line []byte) error {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	select {
	case <-c.outClosed:
		return io.ErrClosedPipe
	default:
	}
	if _, err := c.out.Write(line); err != nil {
		c.closeOut.Do(func() { close(c.outClosed) })
		return err
	}
	return nil
}

// response is one JSON-RPC response as a line: the client's id spliced in
// byte for byte (encoding/json would re-escape a string id and cannot
// hold an integer above 2^53 in anything but raw bytes), a nil id as null.
func response(id []byte, member string, body any) []byte {
	b, err := json.Marshal(body)
	if err != nil {
		b, _ = json.Marshal(&rpcError{Code: codeInternalError, Message: "internal error"})
		member = "error"
	}
	if id == nil {
		id = []byte("null")
	}
	out := make([]byte, 0, len(b)+len(id)+40)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = fmt.Appendf(out, `,%q:`, member)
	out = append(out, b...)
	return append(out, "}\n"...)
}
