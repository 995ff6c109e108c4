package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/server"
)

// notifications/cancelled cancels exactly the named call's context, and
// the call is answered with a protocol error, never an isError envelope.
func TestCancelledNotificationCancelsOnlyThatCall(t *testing.T) {
	started := make(chan string, 2)
	eng := &fakeEngine{dir: "/nb",
		pull: func(ctx context.Context, path string) (*server.Result, error) {
			started <- path
			<-ctx.Done()
			return nil, ctx.Err()
		},
		commit: func(ctx context.Context, path, _ string) (*server.Result, error) {
			started <- "commit"
			select {
			case <-ctx.Done():
				return nil, errors.New("the commit was cancelled too")
			case <-time.After(200 * time.Millisecond):
				return &server.Result{Path: "/nb"}, nil
			}
		},
	}
	p := servePipe(t, eng)
	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"notes_pull","arguments":{}}}`)
	p.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"notes_commit","arguments":{"message":"m"}}}`)
	<-started
	<-started
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	byID := map[string]reply{}
	for range 2 {
		r := decodeReply(t, p.next())
		byID[string(r.ID)] = r
	}
	if r := byID["7"]; r.Error == nil || r.Error.Code != -32603 || r.Result != nil {
		t.Fatalf("cancelled call answered %+v", r)
	}
	if r := byID["8"]; r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("the other call was disturbed: %+v %s", r, r.Result)
	}
}

// Tool calls run side by side: each of two calls waits until both have
// started, which a serial loop would never let happen, and a ping is
// answered while they run.
func TestTwoCallsRunConcurrentlyAndBothAreAnswered(t *testing.T) {
	var running atomic.Int32
	both := make(chan struct{})
	release := make(chan struct{})
	eng := &fakeEngine{dir: "/nb", pull: func(ctx context.Context, path string) (*server.Result, error) {
		if running.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
		case <-time.After(5 * time.Second):
			return nil, errors.New("the other call never started")
		}
		<-release
		return &server.Result{Path: path}, nil
	}}
	p := servePipe(t, eng)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_pull","arguments":{"path":"/nb/a"}}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notes_pull","arguments":{"path":"/nb/b"}}}`)
	<-both
	p.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := decodeReply(t, p.next()); string(r.ID) != `3` {
		t.Fatalf("first reply %+v, want the ping's while both calls run", r)
	}
	close(release)
	got := map[string]string{}
	for range 2 {
		r := decodeReply(t, p.next())
		if r.Error != nil {
			t.Fatalf("call %s failed: %+v", r.ID, r.Error)
		}
		res := structuredOf(t, r.Result)
		got[string(r.ID)], _ = res["path"].(string)
	}
	if got["1"] != "/nb/a" || got["2"] != "/nb/b" {
		t.Fatalf("answers %v", got)
	}
}
