package main

// The black-box harness: the slivingdoc binary is built once per test
// process (lazily, so unit tests pay nothing), and each test drives it as a
// user would, through argv, environment, files and exit codes.
//
// cliBinary(t) is the normal build; cliFailpointBinary(t) the build with
// -tags failpoints used by the crash tests. MCP black-box tests may use
// cliBinary too.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var builds struct {
	dir string
	mu  sync.Mutex
	bin map[string]string // tags -> path
	err map[string]error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "slivingdoc-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	builds.dir = dir
	builds.bin = map[string]string{}
	builds.err = map[string]error{}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildBinary builds ./cmd/slivingdoc (this package) with tags, once.
func buildBinary(t testing.TB, tags string) string {
	t.Helper()
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if p, ok := builds.bin[tags]; ok {
		return p
	}
	if err, ok := builds.err[tags]; ok {
		t.Fatal(err)
	}
	name := "slivingdoc"
	if tags != "" {
		name += "-" + tags
	}
	out := filepath.Join(builds.dir, name)
	args := []string{"build", "-o", out}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, ".")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		builds.err[tags] = fmt.Errorf("go build %v: %v\n%s", args, err, b)
		t.Fatal(builds.err[tags])
	}
	builds.bin[tags] = out
	return out
}

func cliBinary(t testing.TB) string          { return buildBinary(t, "") }
func cliFailpointBinary(t testing.TB) string { return buildBinary(t, "failpoints") }
