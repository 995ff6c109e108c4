package main

// The MCP black-box harness: `slivingdoc serve` runs as a child process and
// an independent client, the official Go SDK, speaks MCP to it over stdio,
// as a host would. Every result and every stderr line of every server the
// suite starts passes through checkNoLeak (mcp_leaks_test.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slivingdoc/slivingdoc/server/mcpserver"
)

// mcpServer is one running `slivingdoc serve` and the client session on it.
type mcpServer struct {
	t      *testing.T
	a      *agent
	cs     *sdk.ClientSession
	stderr *lockedBuffer
	// forbidden are the literal strings no output may contain.
	forbidden []string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serve starts `slivingdoc serve --workspace-root <agent dir> flags...`.
func (a *agent) serve(flags ...string) *mcpServer {
	a.nb.t.Helper()
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		a.nb.t.Fatal(err)
	}
	return a.serveArgs(append([]string{"serve", "--workspace-root", a.dir}, flags...)...)
}

// serveArgs starts the binary with exactly args (for the session-directory
// case without --workspace-root).
func (a *agent) serveArgs(args ...string) *mcpServer {
	a.nb.t.Helper()
	return a.serveClient(sdk.Implementation{Name: "slivingdoc-test", Version: "0"}, nil, args...)
}

// serveClient is serveArgs with the client's clientInfo and more
// environment for the server.
func (a *agent) serveClient(info sdk.Implementation, extraEnv []string, args ...string) *mcpServer {
	t := a.nb.t
	t.Helper()
	cmd := exec.Command(a.bin, args...)
	cmd.Env = append(serveEnv(a.env), extraEnv...)
	cmd.Dir = filepath.Dir(a.dir)
	m := &mcpServer{t: t, a: a, stderr: &lockedBuffer{}, forbidden: forbiddenIn(cmd.Env, a.priv)}
	cmd.Stderr = m.stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := sdk.NewClient(&info, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to %v: %v\nstderr:\n%s", args, err, m.stderr)
	}
	m.cs = cs
	t.Cleanup(m.close)
	return m
}

// close ends the session (stdin closes, the server exits 0) and scans its
// log output.
func (m *mcpServer) close() {
	if m.cs == nil {
		return
	}
	if err := m.cs.Close(); err != nil {
		m.t.Errorf("server exit: %v\nstderr:\n%s", err, m.stderr)
	}
	m.cs = nil
	for _, line := range strings.Split(m.stderr.String(), "\n") {
		checkNoLeak(m.t, "log line", line, m.forbidden)
		if strings.Contains(line, "uncatalogued token") {
			m.t.Errorf("the server emitted a token diag.Catalog lacks: %s", line)
		}
	}
}

// result is one tools/call outcome as the client received it.
type result struct {
	isError bool
	text    string         // the single text item
	s       map[string]any // structuredContent
	raw     string         // structuredContent as JSON
}

func (r result) str(field string) string { v, _ := r.s[field].(string); return v }

// files returns the structured files array.
func (r result) files() []map[string]any {
	var out []map[string]any
	for _, f := range r.s["files"].([]any) {
		out = append(out, f.(map[string]any))
	}
	return out
}

// call calls tool with args (any JSON value; json.RawMessage is sent as is).
func (m *mcpServer) call(tool string, args any) result {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := m.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		m.t.Fatalf("%s(%v): protocol error %v\nstderr:\n%s", tool, args, err, m.stderr)
	}
	if len(res.Content) != 1 {
		m.t.Fatalf("%s: %d content items, want exactly one text item", tool, len(res.Content))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		m.t.Fatalf("%s: content is %T, want text", tool, res.Content[0])
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		m.t.Fatal(err)
	}
	r := result{isError: res.IsError, text: tc.Text, raw: string(raw)}
	if err := json.Unmarshal(raw, &r.s); err != nil || r.s == nil {
		m.t.Fatalf("%s: structuredContent is not an object: %s", tool, raw)
	}
	checkNoLeak(m.t, tool+" text", r.text, m.forbidden)
	checkNoLeak(m.t, tool+" structured", r.raw, m.forbidden)
	checkConforms(m.t, tool, raw)
	return r
}

// advertised is the outputSchema the server advertises for both tools,
// resolved once by a real JSON Schema validator (TestAdvertisedSchemaIsTheBuiltOne
// proves a serve process advertises exactly these bytes).
var advertised = sync.OnceValues(func() (*jsonschema.Resolved, error) {
	var sc jsonschema.Schema
	if err := json.Unmarshal(mcpserver.OutputSchema(), &sc); err != nil {
		return nil, err
	}
	return sc.Resolve(nil)
})

// checkConforms validates one structured result against the advertised
// outputSchema: every result the black-box suite collects through call
// passes here, so a token missing from the catalogue fails the test that
// provoked it.
func checkConforms(t *testing.T, tool string, structured []byte) {
	t.Helper()
	res, err := advertised()
	if err != nil {
		t.Fatalf("outputSchema: %v", err)
	}
	var v any
	if err := json.Unmarshal(structured, &v); err != nil {
		t.Fatal(err)
	}
	if err := res.Validate(v); err != nil {
		t.Fatalf("%s: structuredContent violates the advertised outputSchema: %v\n%s", tool, err, structured)
	}
}

func (m *mcpServer) pull() result {
	m.t.Helper()
	return m.mustOK(ToolPullName, m.call(ToolPullName, map[string]any{}))
}

func (m *mcpServer) commit(msg string) result {
	m.t.Helper()
	return m.mustOK(ToolCommitName, m.call(ToolCommitName, map[string]any{"message": msg}))
}

func (m *mcpServer) mustOK(tool string, r result) result {
	m.t.Helper()
	if r.isError || r.str("code") != "OK" {
		m.t.Fatalf("%s failed:\n%s\nstderr:\n%s", tool, r.text, m.stderr)
	}
	return r
}

// Tool names as an agent types them.
const (
	ToolPullName   = "notes_pull"
	ToolCommitName = "notes_commit"
)

// wantError asserts the tokens of a domain error and that the text item
// repeats them in the spec's format.
func wantError(t *testing.T, r result, code, reason, action string, retryable bool) {
	t.Helper()
	if !r.isError {
		t.Fatalf("want %s/%s, got success:\n%s", code, reason, r.text)
	}
	if r.str("code") != code || r.str("reason") != reason || r.str("action") != action || r.s["retryable"] != retryable {
		t.Fatalf("want %s/%s/%s retryable=%t, got %s", code, reason, action, retryable, r.raw)
	}
	id := r.str("diagnosticId")
	if !diagnosticIDPattern.MatchString(id) {
		t.Fatalf("diagnosticId %q", id)
	}
	if r.str("message") == "" {
		t.Fatalf("empty message: %s", r.raw)
	}
	lines := strings.Split(r.text, "\n")
	if lines[0] != code+" · "+reason || lines[1] != r.str("message") {
		t.Fatalf("text item head:\n%s", r.text)
	}
	for _, want := range []string{"action: " + action, "retryable: " + boolText(retryable), "diagnosticId: " + id} {
		if !containsLine(lines, want) {
			t.Fatalf("text item lacks %q:\n%s", want, r.text)
		}
	}
	for _, f := range r.files() {
		line := "file: " + f["path"].(string) + " · " + f["reason"].(string)
		if !hasLinePrefix(lines, line) {
			t.Fatalf("text item lacks %q:\n%s", line, r.text)
		}
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

func hasLinePrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if l == prefix || strings.HasPrefix(l, prefix+" · ") {
			return true
		}
	}
	return false
}

// fileReasons maps files[].path to files[].reason.
func fileReasons(r result) map[string]string {
	out := map[string]string{}
	for _, f := range r.files() {
		out[f["path"].(string)] = f["reason"].(string)
	}
	return out
}

// fileRanges maps files[].path to its ranges as [start,end] pairs.
func fileRanges(r result) map[string][][2]int {
	out := map[string][][2]int{}
	for _, f := range r.files() {
		rs := [][2]int{}
		for _, x := range f["ranges"].([]any) {
			m := x.(map[string]any)
			rs = append(rs, [2]int{int(m["start"].(float64)), int(m["end"].(float64))})
		}
		out[f["path"].(string)] = rs
	}
	return out
}

// storeDir is the file store's directory of nb.
func storeDir(nb *notebook) string {
	for _, kv := range nb.env {
		if v, ok := strings.CutPrefix(kv, "SLIVINGDOC_STORE=file://"); ok {
			return filepath.FromSlash(v)
		}
	}
	nb.t.Fatal("not a file store")
	return ""
}
