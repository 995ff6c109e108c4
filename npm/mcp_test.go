package npm_test

// An MCP host's configuration, { "command": "npx", "args": ["-y",
// "slivingdoc", "serve"] }, gives a working server: a real MCP client completes
// initialize and tools/list through npx and the launcher, the server
// advertises slivingdoc at the release version, and closing stdin ends the
// whole chain cleanly.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hasCommand reports whether the binary lists name in its usage.
func hasCommand(t *testing.T, binary, name string) bool {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(binary, "help")
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s help: %v", binary, err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name && strings.HasPrefix(line, "  ") {
			return true
		}
	}
	return false
}

func TestMCPOverLauncher(t *testing.T) {
	project := installProject(t, hostTarballs(t))
	if !hasCommand(t, installedBinary(t, project), "serve") {
		t.Skip("the binary has no serve command yet")
	}

	home := t.TempDir()
	cmd := exec.Command("npx", "-y", "slivingdoc", "serve")
	cmd.Dir = project
	// Everything the server keeps goes under home.
	cmd.Env = npmEnv(
		"HOME="+home,
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"SLIVINGDOC_STORE=file://"+filepath.ToSlash(filepath.Join(home, "store")),
		"SLIVINGDOC_PRIVATE_ROOT="+filepath.Join(home, "private"),
		"SLIVINGDOC_WORKSPACE_ROOT="+filepath.Join(home, "work"),
	)
	if err := os.MkdirAll(filepath.Join(home, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "npm-launcher-test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("initialize through npx: %v\nstderr:\n%s", err, stderr.String())
	}
	info := session.InitializeResult().ServerInfo
	if info == nil || info.Name != "slivingdoc" || info.Version != testVersion {
		t.Errorf("server advertises %+v, want slivingdoc %s", info, testVersion)
	}
	tools, err := session.ListTools(ctx, &mcp.ListToolsParams{})
	if err != nil {
		t.Fatalf("tools/list: %v\nstderr:\n%s", err, stderr.String())
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"notes_commit", "notes_pull"}) {
		t.Errorf("tools %v, want notes_commit and notes_pull", names)
	}
	// Close shuts stdin and waits: an error is a non-zero exit or a hang.
	if err := session.Close(); err != nil {
		t.Errorf("closing stdin did not end npx, launcher and server cleanly: %v\nstderr:\n%s", err, stderr.String())
	}
}
