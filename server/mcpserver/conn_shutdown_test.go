package mcpserver

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/server"
)

// blockingEngine's pull reports that it started and returns only when
// released, whatever its context says: a commit mid-publication.
func blockingEngine() (eng *fakeEngine, started, release chan struct{}) {
	started, release = make(chan struct{}), make(chan struct{})
	eng = &fakeEngine{dir: "/nb", pull: func(ctx context.Context, path string) (*server.Result, error) {
		close(started)
		<-release
		return &server.Result{Path: "/nb", Generation: 9}, nil
	}}
	return eng, started, release
}

// At stdin EOF the loop stops reading but waits for the call in flight,
// whose answer still goes out, before Serve returns nil.
func TestEOFWaitsForInFlightCall(t *testing.T) {
	eng, started, release := blockingEngine()
	p := servePipe(t, eng)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_pull","arguments":{}}}`)
	<-started
	p.in.Close()
	select {
	case err := <-p.done:
		t.Fatalf("Serve returned (%v) with a call in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	r := decodeReply(t, p.next())
	if string(r.ID) != `1` || r.Error != nil || structuredOf(t, r.Result)["generation"] != float64(9) {
		t.Fatalf("in-flight call answered %+v", r)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		p.done <- nil // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the call finished")
	}
}

// Cancelling Serve's context also waits for the call in flight.
func TestContextCancelWaitsForInFlightCall(t *testing.T) {
	eng, started, release := blockingEngine()
	a, err := New(eng, Options{Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := servePipeAdapter(t, ctx, a)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_pull","arguments":{}}}`)
	<-started
	cancel()
	select {
	case err := <-p.done:
		t.Fatalf("Serve returned (%v) with a call in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		p.done <- nil
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the call finished")
	}
}

// structuredOf returns a tool result's structuredContent.
func structuredOf(t *testing.T, result json.RawMessage) map[string]any {
	t.Helper()
	var res struct {
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		t.Fatalf("tool result %s: %v", result, err)
	}
	if res.IsError {
		t.Fatalf("tool result is an error: %s", result)
	}
	return res.StructuredContent
}

// A call that does not finish within ShutdownGrace after input ended is
// cancelled (the engine survives cancellation), answered as a protocol
// error naming the shutdown, and Serve returns.
func TestGraceCancelsACallThatOutlivesIt(t *testing.T) {
	defer func(g time.Duration) { ShutdownGrace = g }(ShutdownGrace)
	ShutdownGrace = 50 * time.Millisecond
	started := make(chan struct{})
	eng := &fakeEngine{dir: "/nb", pull: func(ctx context.Context, path string) (*server.Result, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	p := servePipe(t, eng)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_pull","arguments":{}}}`)
	<-started
	p.in.Close()
	r := decodeReply(t, p.next())
	if string(r.ID) != `1` || r.Error == nil || r.Error.Code != -32603 || r.Error.Message != errShutdown.Error() {
		t.Fatalf("the call cut off by the shutdown answered %+v", r)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		p.done <- nil
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
}
