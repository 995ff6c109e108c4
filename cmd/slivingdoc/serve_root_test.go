package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A host configured with a --workspace-root that does not exist yet gets a
// working server: serve creates the directory, as pull creates its own.
func TestServeCreatesAMissingWorkspaceRoot(t *testing.T) {
	a := newNotebook(t, backends[0]).agent("a")
	root := filepath.Join(t.TempDir(), "not", "yet", "there")
	p := startServe(t, a, nil, "--workspace-root", root)
	p.initialize()
	if r := p.call("1", "tools/call", `{"name":"notes_pull","arguments":{}}`); !r.toolOK() {
		t.Fatalf("pull in a created root: %s\nstderr:\n%s", r.line, p.stderr)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		t.Fatalf("the workspace root was not created: %v", err)
	}
	p.in.Close()
	if st := p.exit(time.Hour); st.ExitStatus() != 0 { // the test binary's timeout bounds it
		t.Fatalf("serve: %v\nstderr:\n%s", st, p.stderr)
	}
}

// A root that cannot be created (below a regular file) is one line on
// stderr naming the setting, exit 2: what a host shows instead of a bare
// "Connection closed".
func TestServeSaysWhyAWorkspaceRootCannotBeCreated(t *testing.T) {
	a := newNotebook(t, backends[0]).agent("a")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := a.run("serve", "--workspace-root", filepath.Join(file, "root"))
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	if o.code != 2 || o.stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], "workspace root") || !strings.Contains(lines[0], "cannot be created") {
		t.Fatalf("want exit 2 and one line naming the workspace root:\n%s", o)
	}
}
