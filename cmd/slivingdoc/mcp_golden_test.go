package main

// Golden snapshots of the MCP surface as it goes over the wire: the
// initialize result (with the instructions), tools/list, and the success
// and error text items, with and without path sets. They are raw JSON-RPC
// exchanges, not an SDK's re-encoding, so they pin the bytes a host sees.
// Run with -update to rewrite testdata/mcp/*.txtar after a deliberate
// change; the spec's sentences make any other difference a bug.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite the MCP golden files in testdata/mcp")

// rawMCP is a line-level JSON-RPC peer of a serve process.
type rawMCP struct {
	t         *testing.T
	cmd       *exec.Cmd
	in        io.WriteCloser
	stderr    *lockedBuffer
	forbidden []string
	lines     chan string
}

func (a *agent) serveRaw(flags ...string) *rawMCP {
	t := a.nb.t
	t.Helper()
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(a.bin, append([]string{"serve", "--workspace-root", a.dir}, flags...)...)
	cmd.Env = serveEnv(a.env)
	r := &rawMCP{t: t, cmd: cmd, stderr: &lockedBuffer{}, forbidden: forbiddenIn(cmd.Env, a.priv), lines: make(chan string, 16)}
	cmd.Stderr = r.stderr
	var err error
	if r.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		r.in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exit: %v\n%s", err, r.stderr)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("serve did not exit when stdin closed")
		}
		for _, line := range strings.Split(r.stderr.String(), "\n") {
			checkNoLeak(t, "log line", line, r.forbidden)
		}
	})
	return r
}

// send writes one line.
func (r *rawMCP) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// next returns the next message from the server.
func (r *rawMCP) next() map[string]json.RawMessage {
	r.t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.t.Fatalf("server closed stdout\nstderr:\n%s", r.stderr)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			r.t.Fatalf("stdout carries a non-JSON-RPC line %q", line)
		}
		checkNoLeak(r.t, "stdout", line, r.forbidden)
		return m
	case <-time.After(30 * time.Second):
		r.t.Fatalf("no answer\nstderr:\n%s", r.stderr)
	}
	return nil
}

// request sends a request and returns its response (result or error).
func (r *rawMCP) request(id int, method, params string) map[string]json.RawMessage {
	r.t.Helper()
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	for {
		m := r.next()
		if string(m["id"]) == fmt.Sprint(id) {
			return m
		}
	}
}

func (r *rawMCP) initialize() json.RawMessage {
	r.t.Helper()
	m := r.request(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"golden","version":"0"}}`)
	if m["result"] == nil {
		r.t.Fatalf("initialize failed: %s", m["error"])
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m["result"]
}

// toolText calls a tool and returns its single text item and isError.
func (r *rawMCP) toolText(id int, tool, args string) (string, bool, json.RawMessage) {
	r.t.Helper()
	m := r.request(id, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
	var res struct {
		Content []struct {
			Type, Text string
		}
		StructuredContent json.RawMessage
		IsError           bool
	}
	if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" {
		r.t.Fatalf("%s: want one text item, got %s %s", tool, m["result"], m["error"])
	}
	checkConforms(r.t, tool, res.StructuredContent)
	return res.Content[0].Text, res.IsError, res.StructuredContent
}

func indent(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.String() + "\n"
}

var goldenID = regexp.MustCompile(`(diagnosticId"?: ?"?)[0-9a-f]{16}`)

// TestMCPGolden snapshots the surface for each path-set configuration.
func TestMCPGolden(t *testing.T) {
	// The spec's sentences, copied here independently of the server's
	// constants: each golden is also checked against them.
	const (
		writableNotes = " Writable paths: `notes`. notes_commit refuses any change elsewhere, resets those files, and reports READ_ONLY_PATH; write only under them."
		readOnlyDocs  = " Read-only paths: `docs, faq.md`. notes_commit refuses any change under them, resets those files, and reports READ_ONLY_PATH; write elsewhere."
		ignored       = " Ignored paths: `*.png, scratch/`. They are not part of the notebook: notes_pull never writes them and notes_commit never publishes, changes or deletes them."
		ignoredPNG    = " Ignored paths: `*.png`. They are not part of the notebook: notes_pull never writes them and notes_commit never publishes, changes or deletes them."
		readOnlyNest  = " Read-only paths: `notes/fixed`. notes_commit refuses any change under them, resets those files, and reports READ_ONLY_PATH; where the two sets nest, the longest matching entry decides."
	)
	cases := []struct {
		name      string
		flags     []string
		sentences string // appended to the instructions and both descriptions
		dirSuffix string // appended to the success text item
		errSets   string // appended to the error text item
	}{
		{"no_sets", nil, "", "", ""},
		{"writable", []string{"--writable", "notes"}, writableNotes, " (writable: notes)", "\nwritable: notes"},
		{"read_only", []string{"--read-only", "docs", "--read-only", "faq.md"}, readOnlyDocs, " (read-only: docs, faq.md)", "\nread-only: docs, faq.md"},
		{"both_sets", []string{"--writable", "notes", "--read-only", "notes/fixed"}, writableNotes + readOnlyNest,
			" (writable: notes; read-only: notes/fixed; longest match decides)", "\nwritable: notes\nread-only: notes/fixed"},
		// Configured ignore patterns are named; the built-in set alone (or
		// none) changes nothing: default_ignores_off.txtar equals no_sets.txtar.
		{"ignore", []string{"--ignore", "*.png", "--ignore", "scratch/"}, ignored, "", ""},
		{"writable_ignore", []string{"--writable", "notes", "--ignore", "*.png"}, writableNotes + ignoredPNG, " (writable: notes)", "\nwritable: notes"},
		{"default_ignores_off", []string{"--no-default-ignores"}, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newNotebook(t, backends[0]).agent("golden")
			r := a.serveRaw(c.flags...)
			// The golden files name the notebook directory $DIR.
			norm := func(s string) string {
				s = strings.ReplaceAll(s, a.dir, "$DIR")
				return goldenID.ReplaceAllString(s, "${1}$$ID")
			}
			init := r.initialize()
			var ir struct {
				Instructions string
				ServerInfo   struct{ Version string }
			}
			if err := json.Unmarshal(init, &ir); err != nil {
				t.Fatal(err)
			}
			// The goldens must not depend on how the binary was stamped
			// (release, VCS, none): the version is checked here, then
			// normalised.
			if v := ir.ServerInfo.Version; v != binaryVersion(t, a.bin) || !semverRE().MatchString(v) {
				t.Errorf("serverInfo.version %q, want the binary's semantic version %q", v, binaryVersion(t, a.bin))
			}
			init = json.RawMessage(strings.Replace(string(init), `"version":`+quoteJSON(ir.ServerInfo.Version), `"version":"$VERSION"`, 1))
			list := r.request(2, "tools/list", `{}`)["result"]
			pullText, pullErr, pullJSON := r.toolText(3, ToolPullName, `{}`)
			if pullErr {
				t.Fatalf("pull failed: %s", pullText)
			}
			errText, isErr, errJSON := r.toolText(4, ToolCommitName, `{"message":" \n"}`)
			if !isErr {
				t.Fatalf("a blank message was accepted: %s", errText)
			}
			if want := specInstructions(a.dir) + c.sentences; ir.Instructions != want {
				t.Errorf("instructions\n got %q\nwant %q", ir.Instructions, want)
			}
			var tl struct {
				Tools []struct{ Name, Description string }
			}
			if err := json.Unmarshal(list, &tl); err != nil {
				t.Fatal(err)
			}
			for _, tool := range tl.Tools {
				if want := specDescriptions[tool.Name] + c.sentences; tool.Description != want {
					t.Errorf("%s description\n got %q\nwant %q", tool.Name, tool.Description, want)
				}
			}
			if len(tl.Tools) != 2 {
				t.Errorf("%d tools", len(tl.Tools))
			}
			if pullText != a.dir+c.dirSuffix {
				t.Errorf("success text item %q, want %q", pullText, a.dir+c.dirSuffix)
			}
			if !strings.HasSuffix(errText, c.errSets) || (c.errSets == "" && strings.Contains(errText, "writable:")) {
				t.Errorf("error text item lacks the path sets %q:\n%s", c.errSets, errText)
			}
			got := formatTxtar([][2]string{
				{"initialize.json", norm(indent(t, init))},
				{"instructions.txt", norm(ir.Instructions) + "\n"},
				{"tools_list.json", indent(t, list)},
				{"pull.text", norm(pullText) + "\n"},
				{"pull.json", norm(indent(t, pullJSON))},
				{"commit_error.text", norm(errText) + "\n"},
				{"commit_error.json", norm(indent(t, errJSON))},
			})
			checkGolden(t, filepath.Join("testdata", "mcp", c.name+".txtar"), got)
		})
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The spec's normative strings (spec/mcp-tools.md), byte for byte.
func specInstructions(dir string) string {
	return "The notebook directory is " + dir + ". Call notes_pull, edit UTF-8 text files (without U+0000) there, then call notes_commit to publish. Both tools default to that directory; pass path only to address a subdirectory of it."
}

var specDescriptions = map[string]string{
	ToolPullName:   "Write the current notebook into the notebook directory and record the accepted state. Omit path or pass an empty string to use the server's notebook directory, which the result reports. Edit UTF-8 text files (without U+0000) there between notes_pull and notes_commit; notes_commit publishes the changes and incorporates concurrent non-conflicting changes.",
	ToolCommitName: "Publish the caller's changes in the notebook directory and incorporate concurrent non-conflicting changes. Omit path or pass an empty string to use the server's notebook directory, which the result reports. message must be non-blank UTF-8 without U+0000, at most 16,384 bytes; it is retained in recent internal history only.",
}

// formatTxtar writes sections in the txtar format (golang.org/x/tools/txtar).
func formatTxtar(files [][2]string) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "-- %s --\n%s", f[0], f[1])
	}
	return b.String()
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs (run with -update after a deliberate change)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
