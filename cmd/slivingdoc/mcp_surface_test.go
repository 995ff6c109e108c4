package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a host sees at connection: the implementation, exactly two tools
// with closed schemas and honest annotations, no prompts, no resources.
func TestMCPServerAdvertisesTwoToolsOnly(t *testing.T) {
	s := newNotebook(t, backends[0]).agent("a").serve()
	init := s.cs.InitializeResult()
	// The version is whatever the build stamped (release, VCS or none):
	// the same as `slivingdoc version`, and always a semantic version.
	if v := init.ServerInfo.Version; init.ServerInfo.Name != "slivingdoc" || v != binaryVersion(t, s.a.bin) || !semverRE().MatchString(v) {
		t.Fatalf("serverInfo %+v, want slivingdoc and the binary's semantic version %q", init.ServerInfo, binaryVersion(t, s.a.bin))
	}
	if c := init.Capabilities; c.Tools == nil || c.Prompts != nil || c.Resources != nil {
		t.Fatalf("capabilities %+v", c)
	}
	ctx := context.Background()
	list, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
	}
	if len(list.Tools) != 2 || !names[ToolPullName] || !names[ToolCommitName] {
		t.Fatalf("tools %v", names)
	}
	for _, tool := range list.Tools {
		schema, _ := json.Marshal(tool.InputSchema)
		var sc map[string]any
		_ = json.Unmarshal(schema, &sc)
		if sc["type"] != "object" || sc["additionalProperties"] != false {
			t.Errorf("%s: schema is not a closed object: %s", tool.Name, schema)
		}
		an := tool.Annotations
		if an == nil || an.ReadOnlyHint || an.DestructiveHint == nil || *an.DestructiveHint {
			t.Errorf("%s: annotations %+v: both tools write, neither destroys", tool.Name, an)
		}
		if tool.Name == ToolCommitName && an.IdempotentHint {
			t.Errorf("notes_commit claims to be idempotent")
		}
	}
	if _, err := s.cs.ListPrompts(ctx, nil); err == nil {
		t.Error("prompts/list answered; the server has no prompts")
	}
	if _, err := s.cs.ListResources(ctx, nil); err == nil {
		t.Error("resources/list answered; the server has no resources")
	}
}

var sessionDirPattern = regexp.MustCompile(`^The notebook directory is (/.+/slivingdoc-[^/]+/notebook)\. Call notes_pull`)

// Without --workspace-root the server uses its host's session directory
// and the agent simply omits path (mcp_session_test.go covers which
// processes share it).
func TestMCPSessionDirectory(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.env = append(a.env, "TMPDIR="+t.TempDir())
	s := a.serveArgs("serve")
	m := sessionDirPattern.FindStringSubmatch(s.cs.InitializeResult().Instructions)
	if m == nil {
		t.Fatalf("instructions: %q", s.cs.InitializeResult().Instructions)
	}
	dir := m[1]
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("session directory %s: %v %v", dir, err, fi)
	}
	if strings.HasPrefix(dir, a.priv) {
		t.Fatal("the session directory is inside the private root")
	}
	r := s.pull()
	if r.text != dir || r.str("path") != dir {
		t.Fatalf("pull reports %q / %q, want %s", r.text, r.str("path"), dir)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.md"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := s.commit("hello"); generation(r) != 1 || fileStats(r)["hello.md"] != [2]int{1, 0} {
		t.Fatalf("commit: %s", r.raw)
	}
	// Nothing outside the session directory is addressable.
	wantError(t, s.call(ToolPullName, map[string]any{"path": a.dir}), "INVALID_REQUEST", "PATH_OUTSIDE_ROOT", "FIX_REQUEST", false)

	// At exit the directory stays, with its files.
	s.close()
	if _, err := os.Stat(filepath.Join(dir, "hello.md")); err != nil {
		t.Fatalf("the session directory lost its files at exit: %v", err)
	}
}

// With --workspace-root, path addresses directories below it, also as ~/.
func TestMCPPathAddressesSubdirectories(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	home := filepath.Dir(a.dir) // HOME contains the workspace root
	a.env = append(a.env, "HOME="+home)
	s := a.serve()
	sub := filepath.Join(a.dir, "team", "one")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r := s.call(ToolPullName, map[string]any{"path": sub})
	if r.isError || r.str("path") != sub || r.text != sub {
		t.Fatalf("pull of a subdirectory: %s", r.text)
	}
	if err := os.WriteFile(filepath.Join(sub, "n.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tilde := "~/" + filepath.Base(a.dir) + "/team/one"
	r = s.call(ToolCommitName, map[string]any{"path": tilde, "message": "sub"})
	if r.isError || r.str("path") != sub || fileStats(r)["n.md"] != [2]int{1, 0} {
		t.Fatalf("commit via ~/: %s\n%s", r.text, r.raw)
	}
	// The default directory is the root itself, which would now contain
	// the notebook directory team/one (issue 14): refused, naming it.
	r = s.call(ToolPullName, map[string]any{})
	if r.str("reason") != "CONTAINS_NOTEBOOK" || !strings.Contains(r.str("message"), "team/one") {
		t.Fatalf("default directory containing team/one: %s", r.raw)
	}
}

// Strict decode through the wire: raw bytes a lenient decoder would accept.
func TestMCPStrictArguments(t *testing.T) {
	s := newNotebook(t, backends[0]).agent("a").serve()
	for _, raw := range []string{
		`{"path":"","path":""}`,
		`{"message":"m","message":"m"}`,
		`{"message":"m","path":null}`,
		`{"message":"m","path":7}`,
		`{"message":"m","force":true}`,
		`{"message":"` + strings.Repeat("x", 16385) + `"}`,
		`{"message":"a\u0000b"}`,
		`{"message":"m","path":"relative/dir"}`,
	} {
		r := s.call(ToolCommitName, json.RawMessage(raw))
		wantError(t, r, "INVALID_REQUEST", "INVALID_ARGUMENT", "FIX_REQUEST", false)
	}
}

// A malformed JSON-RPC message and an unknown tool are protocol errors,
// never a tool result; the server keeps serving afterwards.
func TestMCPProtocolErrorsStayProtocolErrors(t *testing.T) {
	r := newNotebook(t, backends[0]).agent("a").serveRaw()
	r.initialize()
	r.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":`)
	m := r.next()
	var e struct{ Code int }
	if json.Unmarshal(m["error"], &e); e.Code != -32700 || m["result"] != nil {
		t.Fatalf("malformed JSON: %v", m)
	}
	m = r.request(8, "tools/call", `{"name":"notes_delete","arguments":{}}`)
	if m["error"] == nil || m["result"] != nil {
		t.Fatalf("unknown tool answered with a result: %s", m["result"])
	}
	if text, isErr, _ := r.toolText(9, ToolPullName, `{}`); isErr {
		t.Fatalf("server unusable after protocol errors: %s", text)
	}
}

// Calls on one server run in parallel without mixing their answers.
func TestMCPConcurrentCallsKeepTheirIDs(t *testing.T) {
	s := newNotebook(t, backends[0]).agent("a").serve()
	s.pull()
	done := make(chan result, 8)
	for range 8 {
		go func() {
			res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolCommitName, Arguments: map[string]any{"message": " "}})
			if err != nil {
				t.Error(err)
				done <- result{}
				return
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			done <- result{s: m, raw: string(raw)}
		}()
	}
	seen := map[any]bool{}
	for range 8 {
		r := <-done
		if seen[r.s["diagnosticId"]] {
			t.Fatalf("diagnosticId repeated: %s", r.raw)
		}
		seen[r.s["diagnosticId"]] = true
	}
}
