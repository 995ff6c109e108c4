package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/author"
)

// authorEngine records the author each commit's context carries.
func authorEngine() (*fakeEngine, chan string) {
	got := make(chan string, 8)
	eng := &fakeEngine{dir: "/nb",
		pull: func(ctx context.Context, path string) (*server.Result, error) {
			return &server.Result{Path: "/nb", Generation: 1}, nil
		},
		commit: func(ctx context.Context, path, _ string) (*server.Result, error) {
			got <- server.AuthorOf(ctx)
			return &server.Result{Path: "/nb", Generation: 2}, nil
		},
	}
	return eng, got
}

// A serve process claims, for each commit, the clientInfo the real
// client sent at initialize and the process's user and host, and the
// result does not echo it.
func TestCommitClaimsTheClientsAuthor(t *testing.T) {
	eng, got := authorEngine()
	a, err := New(eng, Options{Version: "1", Author: author.Claim{User: "ana", Host: "build-7"}})
	if err != nil {
		t.Fatal(err)
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, sr, sw); sw.Close() }()
	client := sdk.NewClient(&sdk.Implementation{Name: "claude-code", Version: "2.1.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		cw.Close()
		cancel()
		<-done
	}()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ToolCommit, Arguments: map[string]any{"message": "m"}})
	if err != nil || res.IsError {
		t.Fatalf("commit: %v %+v", err, res)
	}
	if a := <-got; a != "claude-code 2.1.0 (ana@build-7)" {
		t.Fatalf("the commit claimed %q", a)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "ana@build-7") || strings.Contains(string(b), "claude-code") {
		t.Fatalf("the result echoes the author: %s", b)
	}
}

// Without initialize's clientInfo the user and host alone; a modern
// request's own _meta clientInfo names its client; an override replaces
// both; clientInfo of the wrong shape labels nothing and refuses nothing.
func TestCommitAuthorSources(t *testing.T) {
	commit := `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"notes_commit","arguments":{"message":"m"}%s}}`
	modern := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"codex","version":"0.9"}}`
	for _, tc := range []struct {
		name  string
		claim author.Claim
		init  string // an initialize request, or none
		meta  string
		want  string
	}{
		{"no clientInfo", author.Claim{User: "ana", Host: "h"}, "", "", "ana@h"},
		{"initialize", author.Claim{User: "ana", Host: "h"},
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"cursor","version":"1.7"}}}`, "", "cursor 1.7 (ana@h)"},
		{"clientInfo of the wrong shape", author.Claim{User: "ana", Host: "h"},
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":5,"version":["x"]}}}`, "", "ana@h"},
		{"modern _meta", author.Claim{User: "ana", Host: "h"}, "", modern, "codex 0.9 (ana@h)"},
		{"override", author.Claim{Override: "planner", HasOverride: true, User: "ana", Host: "h"},
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"cursor","version":"1.7"}}}`, "", "planner"},
		{"empty override", author.Claim{HasOverride: true, User: "ana", Host: "h"}, "", modern, "codex 0.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng, got := authorEngine()
			a, err := New(eng, Options{Version: "1", Author: tc.claim})
			if err != nil {
				t.Fatal(err)
			}
			p := servePipeAdapter(t, context.Background(), a)
			if tc.init != "" {
				p.send(tc.init)
				if r := decodeReply(t, p.next()); r.Error != nil {
					t.Fatalf("initialize: %+v", r.Error)
				}
			}
			p.send(fmt.Sprintf(commit, tc.meta))
			r := decodeReply(t, p.next())
			if r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
				t.Fatalf("commit: %+v %s", r.Error, r.Result)
			}
			if a := <-got; a != tc.want {
				t.Fatalf("the commit claimed %q, want %q", a, tc.want)
			}
		})
	}
}
