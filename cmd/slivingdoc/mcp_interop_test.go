package main

// Interop: two independent MCP client implementations, the official Go SDK
// and mcp-go's client, drive the built binary at every protocol version
// each offers: initialize (or discover), tools/list, pull, commit, a
// refused commit, every structuredContent validated against the
// outputSchema the server advertised for that tool.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// schemas validates structured results against advertised outputSchemas.
type schemas map[string]*jsonschema.Resolved

func (s schemas) add(t *testing.T, tool string, raw any) {
	t.Helper()
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var sc jsonschema.Schema
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatalf("%s: outputSchema does not parse: %v\n%s", tool, err, b)
	}
	if sc.Type != "object" {
		t.Fatalf("%s: outputSchema type %q, MCP requires object", tool, sc.Type)
	}
	res, err := sc.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: outputSchema does not resolve: %v", tool, err)
	}
	s[tool] = res
}

func (s schemas) check(t *testing.T, tool string, structured any) {
	t.Helper()
	res, ok := s[tool]
	if !ok {
		t.Fatalf("%s advertised no outputSchema", tool)
	}
	b, err := json.Marshal(structured)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := res.Validate(v); err != nil {
		t.Fatalf("%s: structuredContent does not validate against the advertised outputSchema: %v\n%s", tool, err, b)
	}
}

// The schema is not vacuous: it refuses a success object with a field
// missing, an unknown field, and an error without its diagnosticId.
func TestOutputSchemaRefusesWrongObjects(t *testing.T) {
	s := schemas{}
	a := newNotebook(t, backends[0]).agent("a")
	m := a.serve()
	list, err := m.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		s.add(t, tool.Name, tool.OutputSchema)
	}
	ok := m.pull()
	var good map[string]any
	_ = json.Unmarshal([]byte(ok.raw), &good)
	s.check(t, ToolPullName, good)
	bad := func(name string, mutate func(map[string]any)) {
		v := map[string]any{}
		_ = json.Unmarshal([]byte(ok.raw), &v)
		mutate(v)
		b, _ := json.Marshal(v)
		var inst any
		_ = json.Unmarshal(b, &inst)
		if s[ToolPullName].Validate(inst) == nil {
			t.Errorf("%s validates: %s", name, b)
		}
	}
	bad("no generation", func(v map[string]any) { delete(v, "generation") })
	bad("unknown field", func(v map[string]any) { v["extra"] = 1 })
	bad("negative insertions", func(v map[string]any) { v["insertions"] = -1 })
	errRes := m.call(ToolCommitName, map[string]any{"message": " "})
	var e map[string]any
	_ = json.Unmarshal([]byte(errRes.raw), &e)
	s.check(t, ToolCommitName, e)
	delete(e, "diagnosticId")
	if s[ToolCommitName].Validate(e) == nil {
		t.Error("an error without diagnosticId validates")
	}
}

func TestInteropGoSDKClientEveryProtocolVersion(t *testing.T) {
	nb := newNotebook(t, backends[0])
	for _, v := range sdk.SupportedProtocolVersions() {
		t.Run(v, func(t *testing.T) {
			a := nb.agent("gosdk-" + v)
			if err := os.MkdirAll(a.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			m := &mcpServer{t: t, a: a, stderr: &lockedBuffer{}}
			cmd := serveCommand(a)
			cmd.Stderr = m.stderr
			m.forbidden = forbiddenIn(cmd.Env, a.priv)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			client := sdk.NewClient(&sdk.Implementation{Name: "interop-gosdk", Version: "0"}, nil)
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second},
				&sdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatalf("connect at %s: %v\nstderr:\n%s", v, err, m.stderr)
			}
			m.cs = cs
			t.Cleanup(m.close)
			init := cs.InitializeResult()
			if v < "2026-07-28" && init.ProtocolVersion != v {
				t.Errorf("asked for %s, negotiated %s", v, init.ProtocolVersion)
			}
			if init.ServerInfo == nil || init.ServerInfo.Name != "slivingdoc" || !semverRE().MatchString(init.ServerInfo.Version) {
				t.Errorf("serverInfo %+v", init.ServerInfo)
			}
			if !strings.Contains(init.Instructions, "The notebook directory is "+a.dir+".") {
				t.Errorf("instructions %q", init.Instructions)
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := schemas{}
			for _, tool := range list.Tools {
				s.add(t, tool.Name, tool.OutputSchema)
			}
			if len(list.Tools) != 2 || len(s) != 2 {
				t.Fatalf("%d tools", len(list.Tools))
			}
			r := m.pull()
			s.check(t, ToolPullName, r.s)
			a.write("interop.md", "from the go sdk at "+v+"\n")
			r = m.commit("interop " + v)
			s.check(t, ToolCommitName, r.s)
			if len(r.files()) != 1 || r.files()[0]["path"] != "interop.md" {
				t.Errorf("commit files %s", r.raw)
			}
			r = m.call(ToolCommitName, map[string]any{"message": "\t"})
			wantError(t, r, "INVALID_REQUEST", "BLANK_MESSAGE", "FIX_REQUEST", false)
			s.check(t, ToolCommitName, r.s)
			r = m.call(ToolPullName, map[string]any{"path": "relative"})
			wantError(t, r, "INVALID_REQUEST", "INVALID_ARGUMENT", "FIX_REQUEST", false)
			s.check(t, ToolPullName, r.s)
		})
	}
}

func TestInteropMCPGoClientEveryProtocolVersion(t *testing.T) {
	nb := newNotebook(t, backends[0])
	for _, v := range mcpgo.ValidProtocolVersions {
		t.Run(v, func(t *testing.T) {
			a := nb.agent("mcpgo-" + v)
			if err := os.MkdirAll(a.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			env := serveEnv(a.env)
			c, err := mcpclient.NewStdioMCPClient(a.bin, env, "serve", "--workspace-root", a.dir)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			init, err := c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
				ProtocolVersion: v,
				ClientInfo:      mcpgo.Implementation{Name: "interop-mcpgo", Version: "0"},
			}})
			if err != nil {
				t.Fatalf("initialize at %s: %v", v, err)
			}
			if init.ProtocolVersion != v {
				t.Errorf("asked for %s, negotiated %s", v, init.ProtocolVersion)
			}
			if init.ServerInfo.Name != "slivingdoc" || !semverRE().MatchString(init.ServerInfo.Version) {
				t.Errorf("serverInfo %+v", init.ServerInfo)
			}
			list, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			s := schemas{}
			for _, tool := range list.Tools {
				var raw any = tool.OutputSchema
				if tool.RawOutputSchema != nil {
					raw = tool.RawOutputSchema
				}
				s.add(t, tool.Name, raw)
			}
			if len(list.Tools) != 2 {
				t.Fatalf("%d tools", len(list.Tools))
			}
			call := func(tool string, args map[string]any) (*mcpgo.CallToolResult, map[string]any) {
				t.Helper()
				res, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: tool, Arguments: args}})
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				b, _ := json.Marshal(res.StructuredContent)
				var sc map[string]any
				if err := json.Unmarshal(b, &sc); err != nil {
					t.Fatalf("%s: structuredContent %s", tool, b)
				}
				s.check(t, tool, sc)
				if len(res.Content) != 1 {
					t.Fatalf("%s: %d content items", tool, len(res.Content))
				}
				return res, sc
			}
			if res, sc := call(ToolPullName, map[string]any{}); res.IsError || sc["path"] != a.dir {
				t.Fatalf("pull: %v", sc)
			}
			if err := os.WriteFile(filepath.Join(a.dir, "interop.md"), []byte("from mcp-go at "+v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if res, sc := call(ToolCommitName, map[string]any{"message": "interop " + v}); res.IsError || sc["filesChanged"] != float64(1) {
				t.Fatalf("commit: %v", sc)
			}
			res, sc := call(ToolCommitName, map[string]any{"message": " "})
			if !res.IsError || sc["reason"] != "BLANK_MESSAGE" {
				t.Fatalf("refused commit: %v", sc)
			}
			text := res.Content[0].(mcpgo.TextContent).Text
			if !strings.HasPrefix(text, "INVALID_REQUEST · BLANK_MESSAGE\n") || !strings.Contains(text, fmt.Sprint("diagnosticId: ", sc["diagnosticId"])) {
				t.Fatalf("refused commit text:\n%s", text)
			}
		})
	}
}

// serveCommand is `slivingdoc serve --workspace-root <agent dir>` with the
// agent's environment, not yet started.
func serveCommand(a *agent) *exec.Cmd {
	cmd := exec.Command(a.bin, "serve", "--workspace-root", a.dir)
	cmd.Env = serveEnv(a.env)
	cmd.Dir = filepath.Dir(a.dir)
	return cmd
}
