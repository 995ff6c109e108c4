//go:build unix

package main

// The official TypeScript SDK's Client.callTool validates structuredContent
// against the advertised outputSchema, error results included: a token the
// schema does not allow turns a domain error into a thrown -32602. It
// drives the built binary through a conflict, each content refusal (every
// file reason of INVALID_FILES, INVALID_UTF8 alone too, a secret in the
// message) and each path refusal; every call must come back as a result.
// The SDK is the one the pinned Inspector installs (mcp_inspector_test.go).

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/secrets/secretstest"
)

// tsClient is calltool.cjs running one TypeScript SDK client session.
type tsClient struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
	cmd *exec.Cmd
	err *lockedBuffer
}

// newTSClient starts a client session on `serve --workspace-root root`.
func newTSClient(t *testing.T, a *agent, root string) *tsClient {
	t.Helper()
	pkgDir := inspectorCLI(t)
	install := filepath.Join(pkgDir, "..", "..", "..") // the install directory: node_modules/@modelcontextprotocol/inspector-cli
	if _, err := os.Stat(filepath.Join(install, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript SDK is not in the Inspector's install: %v", err)
	}
	script, err := filepath.Abs("testdata/tssdk/calltool.cjs")
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal([]string{a.bin, "serve", "--workspace-root", root})
	env := map[string]string{}
	for _, kv := range serveEnv(a.env) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	envJSON, _ := json.Marshal(env)
	cmd := exec.Command("node", script)
	cmd.Env = append(os.Environ(), "SDK_PACKAGE_JSON="+filepath.Join(install, "package.json"),
		"SERVER_ARGV="+string(argv), "SERVER_ENV="+string(envJSON))
	c := &tsClient{t: t, cmd: cmd, err: &lockedBuffer{}}
	cmd.Stderr = c.err
	if c.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewScanner(stdout)
	c.out.Buffer(nil, 1<<22)
	t.Cleanup(func() {
		c.in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("calltool.cjs: %v\n%s", err, c.err)
		}
		checkNoLeak(t, "TypeScript SDK client stderr", c.err.String(), forbiddenIn(serveEnv(a.env), a.priv))
	})
	c.next() // the tools were listed
	return c
}

type tsReply struct {
	OK      bool
	Code    int
	Message string
	Result  struct {
		IsError           bool
		Content           []struct{ Type, Text string }
		StructuredContent map[string]any
	}
}

func (c *tsClient) next() tsReply {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("calltool.cjs ended: %v\n%s", c.out.Err(), c.err)
	}
	var r tsReply
	if err := json.Unmarshal(c.out.Bytes(), &r); err != nil {
		c.t.Fatalf("calltool.cjs wrote %q: %v", c.out.Text(), err)
	}
	return r
}

// call calls tool; callTool must return a result (its validation passed),
// whose code and reason are returned.
func (c *tsClient) call(tool string, args map[string]any) (code, reason string, files map[string]string) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"tool": tool, "args": args})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	r := c.next()
	if !r.OK {
		c.t.Fatalf("TypeScript SDK callTool(%s) threw %d %s", tool, r.Code, r.Message)
	}
	sc := r.Result.StructuredContent
	if sc == nil || len(r.Result.Content) != 1 {
		c.t.Fatalf("%s: %+v", tool, r.Result)
	}
	files = map[string]string{}
	if fs, ok := sc["files"].([]any); ok && sc["code"] != "OK" {
		for _, f := range fs {
			m := f.(map[string]any)
			files[m["path"].(string)] = m["reason"].(string)
		}
	}
	code, _ = sc["code"].(string)
	reason, _ = sc["reason"].(string)
	return code, reason, files
}

func TestTypeScriptSDKCallToolValidatesEveryRefusal(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a, other := nb.agent("ts"), nb.agent("other")
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := newTSClient(t, a, a.dir)
	want := func(tool string, args map[string]any, code, reason string) map[string]string {
		t.Helper()
		return c.want(tool, args, code, reason)
	}
	want(ToolPullName, map[string]any{}, "OK", "")

	// Path refusals that need a workspace root above notebook
	// directories: a directory never pulled, one containing a notebook.
	u := nb.agent("up")
	inner, fresh := filepath.Join(u.dir, "inner"), filepath.Join(u.dir, "fresh")
	for _, d := range []string{inner, fresh} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	up := newTSClient(t, u, u.dir)
	up.want(ToolPullName, map[string]any{"path": inner}, "OK", "")
	up.want(ToolCommitName, map[string]any{"message": "m", "path": fresh}, "INVALID_REQUEST", "NOT_PULLED")
	up.want(ToolPullName, map[string]any{}, "INVALID_REQUEST", "CONTAINS_NOTEBOOK")

	// Path refusals.
	if err := os.WriteFile(filepath.Join(a.dir, "file.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want(ToolPullName, map[string]any{"path": "relative"}, "INVALID_REQUEST", "INVALID_ARGUMENT")
	want(ToolPullName, map[string]any{"path": filepath.Dir(a.dir)}, "INVALID_REQUEST", "PATH_OUTSIDE_ROOT")
	want(ToolPullName, map[string]any{"path": filepath.Join(a.dir, "file.md")}, "INVALID_REQUEST", "PATH_NOT_DIRECTORY")
	want(ToolPullName, map[string]any{"path": a.dir + "/" + strings.Repeat("c", 4000)}, "INVALID_REQUEST", "INVALID_ARGUMENT")
	want(ToolCommitName, map[string]any{"message": "m", "path": a.dir + "/" + strings.Repeat("n", 300)}, "INVALID_REQUEST", "INVALID_ARGUMENT")
	want(ToolCommitName, map[string]any{"message": " "}, "INVALID_REQUEST", "BLANK_MESSAGE")
	os.Remove(filepath.Join(a.dir, "file.md"))

	// Content refusals: INVALID_UTF8 alone, then every file reason at once.
	a.write("bad-utf8.md", "caf\xe9\n")
	if files := want(ToolCommitName, map[string]any{"message": "utf8"}, "INVALID_CONTENT", "INVALID_FILES"); files["bad-utf8.md"] != "INVALID_UTF8" {
		t.Fatalf("files %v", files)
	}
	gh := secretstest.Cases(41)[2]
	a.write("zero.md", "a\x00b\n")
	a.write("Case.md", "1\n")
	a.write("case.md", "2\n")
	a.write("a:b.md", "colon\n")
	if err := os.Symlink("zero.md", filepath.Join(a.dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(a.dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	deep := deepFile(t, a.dir)
	files := want(ToolCommitName, map[string]any{"message": "every refusal"}, "INVALID_CONTENT", "INVALID_FILES")
	seen := map[string]bool{}
	for _, r := range files {
		seen[r] = true
	}
	for _, r := range []string{"INVALID_UTF8", "NUL_BYTE", "SYMLINK", "SPECIAL_FILE", "INVALID_NAME", "NAME_COLLISION", "PATH_TOO_LONG"} {
		if !seen[r] {
			t.Errorf("file reason %s not reported: %v", r, seen)
		}
	}
	for _, p := range []string{"bad-utf8.md", "zero.md", "Case.md", "case.md", "a:b.md", "link.md", "pipe", strings.SplitN(deep, "/", 2)[0]} {
		if err := os.RemoveAll(filepath.Join(a.dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	// Secrets are read once the files are ones the notebook can hold.
	a.write("token.md", "x\n"+gh.Lines[0]+"\n")
	a.write(gh.Secret+".md", "plain\n")
	files = want(ToolCommitName, map[string]any{"message": "secrets"}, "INVALID_CONTENT", "INVALID_FILES")
	if len(files) != 2 || files["token.md"] != "SECRET" || files["[secret].md"] != "SECRET_IN_NAME" {
		t.Fatalf("files %v", files)
	}
	os.Remove(filepath.Join(a.dir, "token.md"))
	os.Remove(filepath.Join(a.dir, gh.Secret+".md"))
	want(ToolCommitName, map[string]any{"message": "with " + gh.Lines[0]}, "INVALID_CONTENT", "SECRET_IN_MESSAGE")

	// A conflict, then its unresolved blocks.
	a.write("notes.md", "one\ntwo\nthree\n")
	want(ToolCommitName, map[string]any{"message": "base"}, "OK", "")
	so := other.serve()
	so.pull()
	other.write("notes.md", "one\nTWO by other\nthree\n")
	so.commit("other edits")
	a.write("notes.md", "one\nTWO by ts\nthree\n")
	if files := want(ToolCommitName, map[string]any{"message": "ts edits"}, "CONTENT_CONFLICT", "MERGE_CONFLICT"); files["notes.md"] != "TEXT_CONFLICT" {
		t.Fatalf("files %v", files)
	}
	if files := want(ToolCommitName, map[string]any{"message": "unresolved"}, "CONTENT_CONFLICT", "UNRESOLVED_MARKERS"); files["notes.md"] != "CONFLICT_MARKERS" {
		t.Fatalf("files %v", files)
	}
}

// want calls tool and checks the code and reason of its result.
func (c *tsClient) want(tool string, args map[string]any, code, reason string) map[string]string {
	c.t.Helper()
	gotCode, gotReason, files := c.call(tool, args)
	if gotCode != code || gotReason != reason {
		c.t.Fatalf("%s(%v): %s/%s, want %s/%s", tool, args, gotCode, gotReason, code, reason)
	}
	return files
}
