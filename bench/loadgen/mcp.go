package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// The serve driver: one long-lived `slivingdoc serve` per agent, spoken to
// over MCP stdio as a host does (newline-delimited JSON-RPC 2.0:
// initialize, notifications/initialized, then tools/call of notes_pull and
// notes_commit). The workloads' "serve" rows use it instead of one CLI
// process per call. It is written against the public surface
// (/work/shared/spec/mcp-tools.md), not the server's code: a call's
// Outcome is read from the structured result (code, generation) or the
// structured error (code, reason).
//
// A call's cost: Wall is the client's round trip; CPU is the server
// process's user+system time consumed during the call, read from
// /proc/<pid>/stat (Linux; 0 elsewhere); RSSKiB is the process's peak
// resident set so far (VmHWM, Linux).

// Drivers of the contention and agents workloads.
const (
	driverCLI   = "cli"   // one slivingdoc process per call
	driverServe = "serve" // one long-lived slivingdoc serve per actor, MCP stdio
)

// mcpServe is one running `slivingdoc serve` and its client.
type mcpServe struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte // stdout, one JSON-RPC message per line
	stderr *boundedBuffer
	nextID int
	waited chan struct{}
	mu     sync.Mutex // one call at a time: an agent's calls are sequential
	cpu    *cpuClock  // under mu
}

// startServe starts bin serve with dir as workspace root (the notebook
// directory) and completes the MCP handshake.
func startServe(ctx context.Context, bin string, env []string, dir string) (*mcpServe, error) {
	cmd := exec.Command(bin, "serve", "--workspace-root", dir)
	cmd.Env = env
	s := &mcpServe{cmd: cmd, lines: make(chan []byte, 16), stderr: &boundedBuffer{max: 64 << 10}, waited: make(chan struct{})}
	cmd.Stderr = s.stderr
	var err error
	if s.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			s.lines <- bytes.Clone(sc.Bytes())
		}
	}()
	go func() { _ = cmd.Wait(); close(s.waited) }()
	if _, err := s.request(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "slivingdoc-loadgen", "version": "0"},
	}); err != nil {
		s.close()
		return nil, fmt.Errorf("serve: initialize: %w", err)
	}
	if err := s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *mcpServe) send(msg any) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = s.in.Write(append(data, '\n'))
	return err
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// request sends one request and returns its result. Requests from the
// server (none are expected: the client declares no capabilities) are
// refused as unknown methods; notifications are skipped.
func (s *mcpServe) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s.nextID++
	id := s.nextID
	if err := s.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", method, err, s.stderr)
	}
	want := fmt.Sprint(id)
	for {
		var line []byte
		var ok bool
		select {
		case line, ok = <-s.lines:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !ok {
			return nil, fmt.Errorf("%s: the server closed stdout\n%s", method, s.stderr)
		}
		var m rpcMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s: stdout carries a non-JSON-RPC line %q", method, line)
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // a request from the server
			_ = s.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		case m.Method != "": // a notification
		case string(m.ID) == want:
			if m.Error != nil {
				return nil, fmt.Errorf("%s: JSON-RPC error %d: %s", method, m.Error.Code, m.Error.Message)
			}
			return m.Result, nil
		}
	}
}

// toolResult is the part of a tools/call result the load generator reads.
type toolResult struct {
	IsError           bool `json:"isError"`
	StructuredContent struct {
		Code       string `json:"code"`
		Reason     string `json:"reason"`
		Generation uint64 `json:"generation"`
	} `json:"structuredContent"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// call runs one tool call and returns it as the CLI driver would: Code ""
// for OK, the error's code and reason otherwise.
func (s *mcpServe) call(ctx context.Context, tool string, args map[string]any) (Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cpu == nil {
		s.cpu = newCPUClock(s.cmd.Process.Pid)
	}
	cpu0 := s.cpu.read()
	t0 := time.Now()
	raw, err := s.request(ctx, "tools/call", map[string]any{"name": tool, "arguments": args})
	o := Outcome{Sample: Sample{Wall: time.Since(t0)}}
	o.CPU = s.cpu.read() - cpu0
	o.RSSKiB = procPeakRSS(s.cmd.Process.Pid)
	if err != nil {
		return o, err
	}
	var r toolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return o, fmt.Errorf("%s: result: %w", tool, err)
	}
	var text []string
	for _, c := range r.Content {
		text = append(text, c.Text)
	}
	o.Stdout = strings.Join(text, "\n")
	sc := r.StructuredContent
	switch {
	case !r.IsError && sc.Code == "OK":
		o.Generation = sc.Generation
	case r.IsError && sc.Code != "" && sc.Code != "OK":
		o.Code, o.Reason = sc.Code, sc.Reason
	default:
		return o, fmt.Errorf("%s: result without a structured outcome: %s", tool, raw)
	}
	return o, nil
}

func (s *mcpServe) pull(ctx context.Context) (Outcome, error) {
	return s.call(ctx, "notes_pull", map[string]any{})
}

func (s *mcpServe) commit(ctx context.Context, msg string) (Outcome, error) {
	return s.call(ctx, "notes_commit", map[string]any{"message": msg})
}

// close ends the session as a host does, by closing stdin, and waits for
// the process (killing it after 10 s).
func (s *mcpServe) close() error {
	s.in.Close()
	// The CPU clock's files go once the process has: a call still waiting
	// on it (holding mu) then ends too.
	defer func() {
		s.mu.Lock()
		if s.cpu != nil {
			s.cpu.close()
		}
		s.mu.Unlock()
	}()
	select {
	case <-s.waited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.waited
		return fmt.Errorf("serve did not exit after stdin closed\n%s", s.stderr)
	}
	if st := s.cmd.ProcessState; st != nil && !st.Success() {
		return fmt.Errorf("serve: %v\n%s", st, s.stderr)
	}
	return nil
}

// boundedBuffer keeps the first max bytes written to it: a server's
// stderr, for error messages.
type boundedBuffer struct {
	mu  sync.Mutex
	b   bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.b.Len(); room > 0 {
		b.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startServes starts one serve per actor, on its notebook (two at a time:
// start-up is not measured), and returns the function that stops them.
func startServes(ctx context.Context, actors []*actor) (func() error, error) {
	stop := func() error {
		var errs []error
		for _, a := range actors {
			if a.nb.mcp != nil {
				errs = append(errs, a.nb.mcp.close())
				a.nb.mcp = nil
			}
		}
		return errors.Join(errs...)
	}
	err := parallel(len(actors), 2, func(i int) error {
		nb := actors[i].nb
		s, err := startServe(ctx, nb.bin, nb.env, nb.dir)
		if err != nil {
			return fmt.Errorf("%s: %w", actors[i].tag, err)
		}
		nb.mcp = s
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, stop())
	}
	return stop, nil
}

// withDriver labels a report row: s alone for the CLI driver (and for
// older results, which have no driver), "s (serve)" for the serve driver.
func withDriver(s, driver string) string {
	if driver == "" || driver == driverCLI {
		return s
	}
	return s + " (" + driver + ")"
}
