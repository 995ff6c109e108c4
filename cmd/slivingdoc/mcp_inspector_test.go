package main

// Interop with a third, independent client: the MCP Inspector CLI (the
// TypeScript SDK) lists the tools of the built binary, calls notes_pull,
// and gets a refused notes_commit; its SDK validates both results against
// the advertised outputSchema.
// The Inspector is pinned by server/mcpserver/testdata/inspector/
// package.json and package-lock.json and installed with `npm ci` into the
// user cache directory on first use (keyed by the lock file's hash).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const inspectorSpec = "../../server/mcpserver/testdata/inspector"

// requireNode fails the test, never skips it, when Node.js or npm is
// missing: the interop tests with the TypeScript SDK and the Inspector are
// part of make test, and a skipped one would look green.
func requireNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: the MCP interop tests with the TypeScript SDK and the Inspector need Node.js 18 or later "+
				"with npm on PATH (https://nodejs.org, or the nodejs and npm packages of the OS)", tool)
		}
	}
}

// inspectorCLI returns the directory of the installed Inspector CLI
// package, installing it when missing.
func inspectorCLI(t *testing.T) string {
	t.Helper()
	requireNode(t)
	lock, err := os.ReadFile(filepath.Join(inspectorSpec, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := os.ReadFile(filepath.Join(inspectorSpec, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(pkg, lock...))
	dir := filepath.Join(cache, "slivingdoc-test", "inspector-"+hex.EncodeToString(sum[:6]))
	pkgDir := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector-cli")
	if _, err := os.Stat(filepath.Join(pkgDir, "build", "cli.js")); err == nil {
		return pkgDir
	}
	// Install into a fresh directory and rename it into place, so an
	// interrupted install is never mistaken for a complete one.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(pkgDir); statErr != nil { // a concurrent run may have won
			t.Fatal(err)
		}
	}
	return pkgDir
}

func TestMCPInspectorListsToolsAndPulls(t *testing.T) {
	pkgDir := inspectorCLI(t)
	a := newNotebook(t, backends[0]).agent("a")
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	store := storeDir(a.nb)
	inspect := func(extra ...string) []byte {
		t.Helper()
		args := append([]string{filepath.Join(pkgDir, "build", "cli.js"), "--cli",
			a.bin, "serve", "--workspace-root", a.dir, "--store", "file://" + filepath.ToSlash(store), "--private-root", a.priv}, extra...)
		cmd := exec.Command("node", args...)
		// The Inspector finds its own package.json relative to the working
		// directory (../package.json), so it must run from build/.
		cmd.Dir = filepath.Join(pkgDir, "build")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("inspector %v: %v\n%s\n%s", extra, err, out.String(), errb.String())
			}
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			t.Fatalf("inspector %v timed out", extra)
		}
		checkNoLeak(t, "inspector output", out.String(), forbiddenIn(a.env, a.priv))
		return out.Bytes()
	}

	var list struct {
		Tools []struct {
			Name        string
			InputSchema map[string]any
		}
	}
	if err := json.Unmarshal(inspect("--method", "tools/list"), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 2 || list.Tools[0].Name != ToolCommitName || list.Tools[1].Name != ToolPullName {
		t.Fatalf("tools: %+v", list.Tools)
	}
	for _, tool := range list.Tools {
		if tool.InputSchema["additionalProperties"] != false {
			t.Errorf("%s: open schema %v", tool.Name, tool.InputSchema)
		}
	}

	var call struct {
		Content           []struct{ Type, Text string }
		StructuredContent map[string]any
		IsError           bool
	}
	if err := json.Unmarshal(inspect("--method", "tools/call", "--tool-name", ToolPullName), &call); err != nil {
		t.Fatal(err)
	}
	if call.IsError || len(call.Content) != 1 || call.Content[0].Text != a.dir || call.StructuredContent["code"] != "OK" || call.StructuredContent["path"] != a.dir {
		t.Fatalf("notes_pull through the Inspector: %+v", call)
	}
	// A domain error: the TypeScript SDK validates structuredContent
	// against the advertised outputSchema whether or not isError is set, so
	// the error envelope must validate too (it would fail the call here).
	call.StructuredContent = nil
	if err := json.Unmarshal(inspect("--method", "tools/call", "--tool-name", ToolCommitName,
		"--tool-arg", "message=x", "--tool-arg", "path=relative"), &call); err != nil {
		t.Fatal(err)
	}
	if !call.IsError || call.StructuredContent["reason"] != "INVALID_ARGUMENT" {
		t.Fatalf("a refused notes_commit through the Inspector: %+v", call)
	}
}
