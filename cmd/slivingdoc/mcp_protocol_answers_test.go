package main

// The smaller protocol answers, through the built binary: a request with
// no method, a tools/list cursor the server did not issue, and path
// components no file system holds, which are the caller's input.

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMCPProtocolAnswers(t *testing.T) {
	a := newNotebook(t, backends[0]).agent("a")
	r := a.serveRaw()
	r.initialize()

	errorOf := func(m map[string]json.RawMessage) (int, string) {
		t.Helper()
		var e struct {
			Code    int
			Message string
		}
		if err := json.Unmarshal(m["error"], &e); err != nil {
			t.Fatalf("want an error, got %s", m["result"])
		}
		return e.Code, e.Message
	}

	r.send(`{"jsonrpc":"2.0","id":7}`)
	if code, msg := errorOf(r.next()); code != -32601 || msg != "Method not found: the request has no method" {
		t.Errorf("no method: %d %q", code, msg)
	}
	for _, cursor := range []string{`"!!!"`, `"abc"`} {
		code, msg := errorOf(r.request(8, "tools/list", `{"cursor":`+cursor+`}`))
		if code != -32602 || !strings.HasPrefix(msg, "Invalid params: the cursor is not one this server issued") {
			t.Errorf("cursor %s: %d %q", cursor, code, msg)
		}
	}

	// Path components over 255 bytes: INVALID_REQUEST, not retryable
	// (they were ENGINE_FAILED/LOCAL_IO, retryable, from ENAMETOOLONG).
	for i, comp := range []string{strings.Repeat("c", 4000), strings.Repeat("n", 300)} {
		for _, tool := range []string{ToolPullName, ToolCommitName} {
			args, _ := json.Marshal(map[string]string{"path": a.dir + "/" + comp, "message": "m"})
			if tool == ToolPullName {
				args, _ = json.Marshal(map[string]string{"path": a.dir + "/" + comp})
			}
			_, isError, sc := r.toolText(20+i, tool, string(args))
			var e struct {
				Code, Reason string
				Retryable    bool
			}
			_ = json.Unmarshal(sc, &e)
			if !isError || e.Code != "INVALID_REQUEST" || e.Reason != "INVALID_ARGUMENT" || e.Retryable {
				t.Errorf("%s with a %d-byte component: %s", tool, len(comp), sc)
			}
		}
	}
}
