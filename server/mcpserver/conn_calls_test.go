package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/server"
)

// notifications/cancelled cancels exactly the named call's engine
// context; the cancelled call gets no response at all (MCP: receivers
// should not answer a cancelled request), and its completion record says
// cancelled, with the client's reason.
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
	logs := &syncBuffer{}
	a, err := New(eng, Options{Version: "1", Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	p := servePipeAdapter(t, context.Background(), a)
	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"notes_pull","arguments":{}}}`)
	p.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"notes_commit","arguments":{"message":"m"}}}`)
	<-started
	<-started
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user pressed stop"}}`)
	byID := map[string]reply{}
	for len(byID) < 1 {
		r := decodeReply(t, p.next())
		byID[string(r.ID)] = r
	}
	// The cancelled pull has returned once its completion record exists;
	// a ping after that proves no response for 7 is still to come.
	waitFor(t, func() bool { return strings.Contains(logs.String(), `"code":"CANCELLED"`) })
	p.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	for byID["9"].JSONRPC == "" {
		r := decodeReply(t, p.next())
		byID[string(r.ID)] = r
	}
	if r, ok := byID["7"]; ok {
		t.Fatalf("the cancelled call was answered: %+v", r)
	}
	if r := byID["8"]; r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("the other call was disturbed: %+v %s", r, r.Result)
	}
	var done map[string]any
	for _, rec := range records(t, logs) {
		if rec["msg"] == "tool call done" && rec["code"] == "CANCELLED" {
			done = rec
		}
	}
	if done == nil || done["reason"] != "user pressed stop" || done["tool"] != ToolPull {
		t.Fatalf("completion record of the cancelled call: %v\n%s", done, logs)
	}
	if strings.Contains(logs.String(), "STORAGE_FAILURE") {
		t.Fatalf("a cancellation was logged as a storage failure:\n%s", logs)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
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
