package mcpserver

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

var diagID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// Every error carries a fresh diagnosticId that names exactly the start
// and completion records of its own call.
func TestDiagnosticIDCorrelatesLogRecords(t *testing.T) {
	eng := &fakeEngine{dir: "/w", pull: func(context.Context, string) (*server.Result, error) {
		return nil, &diag.Error{Code: diag.CodeRemoteBusy, Reason: diag.ReasonRetriesExhausted, Action: diag.ActionRetry,
			Retryable: true, Message: "busy", Cause: errors.New("lost 9 races")}
	}}
	cs, logs := connect(t, eng)
	ctx := context.Background()
	seen := map[string]bool{}
	for range 3 {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ToolPull})
		if err != nil {
			t.Fatal(err)
		}
		id, _ := structured(t, res)["diagnosticId"].(string)
		if !diagID.MatchString(id) {
			t.Fatalf("diagnosticId %q", id)
		}
		if seen[id] {
			t.Fatalf("diagnosticId %s reused", id)
		}
		seen[id] = true
		if !strings.HasSuffix(text(t, res), "diagnosticId: "+id) {
			t.Fatalf("text item lacks the ID:\n%s", text(t, res))
		}
	}
	byID := map[string][]map[string]any{}
	for _, r := range records(t, logs) {
		if id, ok := r["mcpReqID"].(string); ok {
			byID[id] = append(byID[id], r)
		}
	}
	for id := range seen {
		recs := byID[id]
		if len(recs) != 2 {
			t.Fatalf("ID %s on %d records, want 2: %v", id, len(recs), recs)
		}
		if recs[1]["code"] != "REMOTE_BUSY" || recs[1]["reason"] != "RETRIES_EXHAUSTED" || recs[1]["cause"] != "lost 9 races" {
			t.Fatalf("completion record %v", recs[1])
		}
	}
}

// An engine failure that is not a domain error, or a panic, still comes
// back as our envelope, with the cause only in the log.
func TestUnexpectedFailuresStayInEnvelope(t *testing.T) {
	for name, pull := range map[string]func(context.Context, string) (*server.Result, error){
		"plain error": func(context.Context, string) (*server.Result, error) {
			return nil, errors.New("open /secret/private/thing: boom")
		},
		"panic": func(context.Context, string) (*server.Result, error) { panic("open /secret/private/thing: boom") },
	} {
		t.Run(name, func(t *testing.T) {
			cs, logs := connect(t, &fakeEngine{dir: "/w", pull: pull}, "/secret/private")
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolPull})
			if err != nil {
				t.Fatal(err)
			}
			s := structured(t, res)
			if !res.IsError || s["code"] != "ENGINE_FAILED" || s["reason"] != "INTERNAL" || s["action"] != "CHECK_HOST" {
				t.Fatalf("got %v", s)
			}
			if _, ok := s["detail"]; ok {
				t.Fatal("an unclassified cause must carry no detail")
			}
			if strings.Contains(text(t, res), "boom") || strings.Contains(text(t, res), "/secret") {
				t.Fatalf("cause leaked into the result: %s", text(t, res))
			}
			if !strings.Contains(logs.String(), "boom") || strings.Contains(logs.String(), "/secret/private") {
				t.Fatalf("log must keep the scrubbed cause: %s", logs.String())
			}
		})
	}
}

// A cancelled call is a protocol error, never an envelope.
func TestCancelledCallIsProtocolError(t *testing.T) {
	started := make(chan struct{})
	eng := &fakeEngine{dir: "/w", pull: func(ctx context.Context, _ string) (*server.Result, error) {
		close(started)
		<-ctx.Done()
		return nil, &diag.Error{Code: diag.CodeEngineFailed, Reason: diag.ReasonInternal, Action: diag.ActionCheckHost, Message: "x", Cause: ctx.Err()}
	}}
	cs, logs := connect(t, eng)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ToolPull})
	if err == nil {
		t.Fatalf("cancelled call returned a result: %+v", res)
	}
	// The server saw the cancellation and answered no envelope: its
	// completion record says CANCELLED.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), `"code":"CANCELLED"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no CANCELLED completion record:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
