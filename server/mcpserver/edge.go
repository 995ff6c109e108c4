package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The edge is the transport between stdio and the protocol (protocol.go;
// doc.go has the picture). It reads the client's lines with a bound,
// refuses ids JSON-RPC and MCP do not allow, gives every request an alias
// of its own, and on the way out restores the client's id byte for byte,
// drops the responses of cancelled requests and replaces Go decoder text.

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
// running, the protocol reads on only when one ends.
const toolWorkers = 64

// aliasPrefix starts every id the protocol sees. An alias names one
// request even when a client reuses an id, so a cancellation, the engine
// context and the response all find their call; the client's id is
// restored from its raw bytes.
const aliasPrefix = "~sd"

// Envelope refusals the edge answers itself. The messages are ours; the
// codes are JSON-RPC's.
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

// call is one request in flight, by alias.
type call struct {
	raw       []byte // the client's id, byte for byte
	key       string // idKey of raw
	method    string
	cancelled bool
	reason    string                  // the client's reason, bounded
	cancel    context.CancelCauseFunc // the engine context of a tool call
}

type edge struct {
	a   *Adapter
	out io.Writer

	outMu     sync.Mutex
	pending   []byte        // an incomplete line the protocol wrote (not expected)
	outClosed chan struct{} // closed when stdout fails
	closeOut  sync.Once

	mu       sync.Mutex
	seq      uint64
	calls    map[string]*call  // by alias
	aliases  map[string]string // idKey -> alias of the latest request with that id
	done     map[string][]byte // recently answered aliases, for notifications after the response
	doneFIFO []string
	graceOut bool // grace over: calls are cancelled
}

func newEdge(a *Adapter, out io.Writer) *edge {
	return &edge{a: a, out: out, outClosed: make(chan struct{}), calls: map[string]*call{}, aliases: map[string]string{}, done: map[string][]byte{}}
}

// Serve speaks MCP JSON-RPC on in/out until in ends, ctx is cancelled
// (serve cancels it on SIGTERM, SIGHUP and SIGINT) or out fails. All three
// end the same way as end of input: no more messages are read, the tool
// calls in flight run on (at most ShutdownGrace, then they are cancelled)
// and their responses are written while out works, and Serve returns nil.
func (a *Adapter) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	a.log.Info("serving", "dir", a.scrub.Text(a.dir), "writable", entries(a.sets.writable), "readOnly", entries(a.sets.readOnly))
	e := newEdge(a, out)
	a.edge.Store(e)
	defer a.edge.CompareAndSwap(e, nil)

	pr, pw := io.Pipe()
	listened := make(chan error, 1)
	go func() { listened <- newProtocol(a, e).listen(pr) }()

	readDone := make(chan error, 1)
	go func() { readDone <- e.readLoop(in, pw) }()

	var readErr error
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
		a.log.Info("stopping", "why", "signal")
	case <-e.outClosed:
		a.log.Info("stopping", "why", "stdout closed")
	}
	grace := e.endInput(pw)
	defer grace.Stop()
	if err := <-listened; err != nil && readErr == nil {
		e.a.log.Warn("transport", "detail", a.scrub.Text(err.Error()))
	}
	return readErr
}

// endInput closes the protocol's input (it then finishes the calls in
// flight and returns) and starts the grace period, whose timer it returns.
func (e *edge) endInput(pw *io.PipeWriter) *time.Timer {
	pw.Close()
	return time.AfterFunc(ShutdownGrace, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.graceOut = true
		for _, c := range e.calls {
			if c.cancel != nil {
				c.cancel(errShutdown)
			}
		}
	})
}

// readLoop forwards the client's lines to the protocol until in ends. It returns
// nil at EOF and the read error otherwise.
func (e *edge) readLoop(in io.Reader, pw *io.PipeWriter) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if tooLong {
			e.refuse(idFromPrefix(line), msgTooLarge)
		} else if len(line) > 0 || err == nil { // a blank line is a parse error
			if fwd := e.inbound(line); fwd != nil {
				if _, werr := pw.Write(append(fwd, '\n')); werr != nil {
					return nil // the protocol stopped reading: shutting down
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			e.a.log.Warn("transport", "detail", e.a.scrub.Text("read input: "+err.Error()))
			return err
		}
	}
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

// envelope is what the edge reads of a message: its top-level members, as
// byte spans of the line.
type envelope struct {
	object    bool
	id        []byte // raw id value; nil when absent
	idStart   int
	idEnd     int
	ids       int
	method    string
	hasMethod bool
	response  bool // has result or error
	params    []byte
}

// scanEnvelope reads the top-level members of one JSON object. ok is false
// for anything that is not a well-formed object; the protocol answers
// those.
func scanEnvelope(line []byte) (env envelope, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return env, false
	}
	env.object = true
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
			env.id, env.idStart, env.idEnd = line[start:end], start, end
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
// integer's digits. ok is false for any other JSON value.
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

// inbound decides what to do with one client line and returns the line to
// forward to the protocol, or nil when the edge answered or dropped it.
func (e *edge) inbound(line []byte) []byte {
	env, ok := scanEnvelope(line)
	if !ok {
		return line // not a JSON object: the protocol's parse errors are right
	}
	if env.ids == 0 {
		if env.method == "notifications/cancelled" {
			return e.cancelNotification(env.params)
		}
		return line
	}
	if env.ids > 1 {
		e.refuse(nil, msgDupID)
		return nil
	}
	key, valid := idKey(env.id)
	if env.response && !env.hasMethod {
		return nil // a response to a request of ours; we send none
	}
	if !valid {
		e.refuse(nil, msgInvalidID)
		return nil
	}
	e.mu.Lock()
	e.seq++
	alias := aliasPrefix + strconv.FormatUint(e.seq, 10)
	e.calls[alias] = &call{raw: bytes.Clone(env.id), key: key, method: env.method}
	e.aliases[key] = alias
	e.mu.Unlock()
	out := make([]byte, 0, len(line)+len(alias)+2)
	out = append(out, line[:env.idStart]...)
	out = strconv.AppendQuote(out, alias)
	return append(out, line[env.idEnd:]...)
}

// cancelNotification marks the request cancelled (its response will be
// dropped), cancels a tool call's engine context, and forwards the
// notification under the alias.
func (e *edge) cancelNotification(params []byte) []byte {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    *string         `json:"reason"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	key, ok := idKey(p.RequestID)
	if !ok {
		return nil
	}
	reason := "no reason given"
	if p.Reason != nil && strings.TrimSpace(*p.Reason) != "" {
		reason = boundText(*p.Reason, 200)
	}
	e.mu.Lock()
	alias, inflight := e.aliases[key]
	var c *call
	if inflight {
		c = e.calls[alias]
	}
	if c == nil || c.cancelled {
		e.mu.Unlock()
		return nil // finished already, or unknown: nothing to cancel
	}
	c.cancelled, c.reason = true, reason
	if c.cancel != nil {
		c.cancel(clientCancel{reason})
	}
	e.mu.Unlock()
	if c.method != "tools/call" {
		e.a.log.Info("request cancelled", "method", boundText(c.method, 64), "reason", e.a.scrub.Text(reason))
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": alias, "reason": reason}})
	return b
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

// callContext is the context a tool call's engine runs under: one the
// client's cancellation and the end of the grace period cancel, and not
// the end of input (a commit in flight should finish).
func (a *Adapter) callContext(ctx context.Context, alias string) (context.Context, func()) {
	e := a.edge.Load()
	if e == nil || alias == "" {
		return ctx, func() {}
	}
	engCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	e.mu.Lock()
	c := e.calls[alias]
	switch {
	case c == nil:
		e.mu.Unlock()
		cancel(nil)
		return ctx, func() {}
	case c.cancelled:
		cancel(clientCancel{c.reason})
	case e.graceOut:
		cancel(errShutdown)
	}
	if c != nil {
		c.cancel = cancel
	}
	e.mu.Unlock()
	return engCtx, func() { cancel(nil) }
}

// refuse answers a message the edge will not forward.
func (e *edge) refuse(id []byte, message string) {
	if id == nil {
		id = []byte("null")
	}
	e.a.log.Warn("message refused", "detail", message)
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	fmt.Fprintf(&b, `,"error":{"code":-32600,"message":%s}}`, strconv.Quote(message))
	b.WriteByte('\n')
	e.writeOut(b.Bytes())
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

// Write receives the protocol's output, one message per line.
func (e *edge) Write(p []byte) (int, error) {
	e.outMu.Lock()
	e.pending = append(e.pending, p...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(e.pending, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, bytes.Clone(e.pending[:i+1]))
		e.pending = e.pending[i+1:]
	}
	e.outMu.Unlock()
	for _, l := range lines {
		if err := e.outbound(l); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// outbound restores the client's id, drops a cancelled request's response
// and replaces Go decoder text, then writes the line.
func (e *edge) outbound(line []byte) error {
	env, ok := scanEnvelope(line)
	if !ok || env.ids != 1 || len(env.id) < 2 || env.id[0] != '"' {
		return e.writeOut(e.restoreAliases(line))
	}
	var alias string
	if json.Unmarshal(env.id, &alias) != nil || !strings.HasPrefix(alias, aliasPrefix) {
		return e.writeOut(line)
	}
	e.mu.Lock()
	c := e.calls[alias]
	if c != nil && env.response {
		delete(e.calls, alias)
		if e.aliases[c.key] == alias {
			delete(e.aliases, c.key)
		}
		e.rememberDone(alias, c.raw)
	}
	e.mu.Unlock()
	if c == nil {
		return e.writeOut(line)
	}
	if c.cancelled && env.response {
		return nil // MCP: a cancelled request gets no response
	}
	out := make([]byte, 0, len(line)+len(c.raw))
	out = append(out, line[:env.idStart]...)
	out = append(out, c.raw...)
	out = append(out, line[env.idEnd:]...)
	return e.writeOut(fixError(e.restoreAliases(out), c.method))
}

// aliasString is an alias as a JSON string anywhere in a message: the
// request id is also copied into _meta (subscriptions/listen's
// subscriptionId). Compiled on first use: only serve needs it.
var aliasString = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"` + regexp.QuoteMeta(aliasPrefix) + `[0-9]+"`)
})

// restoreAliases puts the client's ids back where an alias was copied into
// the body of a message.
func (e *edge) restoreAliases(line []byte) []byte {
	if !bytes.Contains(line, []byte(`"`+aliasPrefix)) {
		return line
	}
	return aliasString().ReplaceAllFunc(line, func(m []byte) []byte {
		alias := m[1 : len(m)-1]
		e.mu.Lock()
		defer e.mu.Unlock()
		if c := e.calls[string(alias)]; c != nil {
			return c.raw
		}
		if raw, ok := e.done[string(alias)]; ok {
			return raw
		}
		return m
	})
}

// fixError replaces the protocol errors whose text is not fit for a peer
// (the answers mcp-go v1.2.1 gave, which the protocol keeps) with
// JSON-RPC's code and a message of ours:
//   - params that do not decode (-32600 "unparsable <method> request: json:
//     cannot unmarshal ...") become -32602, without Go decoder text;
//   - a request with no method (-32601 "Method  not found", the empty name
//     between two spaces) says so;
//   - a tools/list cursor that does not decode (-32602 "illegal base64
//     data at input byte 0") says what a cursor is.
func fixError(line []byte, method string) []byte {
	if !bytes.Contains(line, []byte(`"error":`)) {
		return line
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	switch {
	case strings.HasPrefix(m.Error.Message, "unparsable ") || strings.Contains(m.Error.Message, "json: "):
		m.Error.Code = -32602
		m.Error.Message = fmt.Sprintf(msgParams, boundText(method, 64))
	case m.Error.Code == -32601 && method == "":
		m.Error.Message = msgNoMethod
	case m.Error.Code == -32602 && method == "tools/list" && !strings.HasPrefix(m.Error.Message, "Invalid params"):
		m.Error.Message = msgCursor
	default:
		return line
	}
	m.Error.Data = nil
	b, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return append(b, '\n')
}

// writeOut writes one whole line to stdout. The first failure (a closed
// stdout) ends the server like end of input.
func (e *edge) writeOut(line []byte) error {
	e.outMu.Lock()
	defer e.outMu.Unlock()
	select {
	case <-e.outClosed:
		return io.ErrClosedPipe
	default:
	}
	if _, err := e.out.Write(line); err != nil {
		e.closeOut.Do(func() { close(e.outClosed) })
		return err
	}
	return nil
}

// rememberDone keeps the raw ids of the last answered requests, so a
// notification sent after the response still names the client's id.
// Called with e.mu held.
func (e *edge) rememberDone(alias string, raw []byte) {
	const keep = 64
	e.done[alias] = raw
	e.doneFIFO = append(e.doneFIFO, alias)
	if len(e.doneFIFO) > keep {
		delete(e.done, e.doneFIFO[0])
		e.doneFIFO = e.doneFIFO[1:]
	}
}
