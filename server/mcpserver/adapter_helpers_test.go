package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slivingdoc/slivingdoc/server"
)

// fakeEngine answers with scripted results; it records the calls it got.
type fakeEngine struct {
	dir                string
	writable, readOnly []string
	pull               func(ctx context.Context, path string) (*server.Result, error)
	commit             func(ctx context.Context, path, message string) (*server.Result, error)
}

func (f *fakeEngine) PathSets() ([]string, []string) { return f.writable, f.readOnly }
func (f *fakeEngine) ResolveDir(path string) (string, error) {
	if path == "" {
		return f.dir, nil
	}
	return path, nil
}
func (f *fakeEngine) Pull(ctx context.Context, path string) (*server.Result, error) {
	return f.pull(ctx, path)
}
func (f *fakeEngine) Commit(ctx context.Context, path, message string) (*server.Result, error) {
	return f.commit(ctx, path, message)
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// connect serves eng over in-memory pipes and returns a go-sdk client
// session on it, plus the server's JSON log records.
func connect(t *testing.T, eng Engine, redact ...string) (*sdk.ClientSession, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	a, err := New(eng, Options{Version: "1.2.3", Logger: slog.New(slog.NewJSONHandler(logs, nil)), Redact: redact})
	if err != nil {
		t.Fatal(err)
	}
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, sr, sw); sw.Close() }()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cw.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return cs, logs
}

// records decodes the JSON log lines.
func records(t *testing.T, logs *syncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(logs.String())))
	for dec.More() {
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func text(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content item, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}
