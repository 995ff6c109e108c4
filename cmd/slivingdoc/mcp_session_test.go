package main

// Which processes share a session directory (docs/mcp-tools.md): every
// server process one host starts, whatever the protocol era, so a client
// that probes with one process and calls tools with another, or starts a
// process per request, sees one directory that exists and that the tools
// use; a different host gets another one. The test process is one host;
// the test binary, re-executed as a wrapper that is not a launcher, is
// another.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// asHostEnv makes the test binary a host: it runs the JSON argv in the
// variable with its own stdio and exits with the command's status.
const asHostEnv = "SLIVINGDOC_TEST_AS_HOST"

func init() {
	v := os.Getenv(asHostEnv)
	if v == "" {
		return
	}
	var argv []string
	if err := json.Unmarshal([]byte(v), &argv); err != nil || len(argv) == 0 {
		os.Exit(2)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	case err != nil:
		os.Exit(2)
	}
	os.Exit(0)
}

// serveEra starts `slivingdoc serve` (no --workspace-root) at protocol
// version v, directly from the test process, or from another host.
func (a *agent) serveEra(t *testing.T, v string, otherHost bool) *mcpServer {
	t.Helper()
	cmd := exec.Command(a.bin, "serve")
	if otherHost {
		argv, _ := json.Marshal([]string{a.bin, "serve"})
		cmd = exec.Command(os.Args[0])
		cmd.Env = append(serveEnv(a.env), asHostEnv+"="+string(argv))
	} else {
		cmd.Env = serveEnv(a.env)
	}
	m := &mcpServer{t: t, a: a, stderr: &lockedBuffer{}, forbidden: forbiddenIn(cmd.Env, a.priv)}
	cmd.Stderr = m.stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "session-" + v, Version: "0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second},
		&sdk.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatalf("connect at %s: %v\nstderr:\n%s", v, err, m.stderr)
	}
	m.cs = cs
	t.Cleanup(m.close)
	return m
}

// instructionsDir is the notebook directory the instructions name.
func instructionsDir(t *testing.T, m *mcpServer) string {
	t.Helper()
	got := sessionDirPattern.FindStringSubmatch(m.cs.InitializeResult().Instructions)
	if got == nil {
		t.Fatalf("instructions: %q", m.cs.InitializeResult().Instructions)
	}
	return got[1]
}

func TestMCPSessionDirectoryIsTheHosts(t *testing.T) {
	nb := newNotebook(t, backends[0])
	for _, v := range sdk.SupportedProtocolVersions() {
		t.Run(v, func(t *testing.T) {
			a := nb.agent("era")
			file := "era-" + v + ".md" // one store for every era: a file of its own
			a.env = append(a.env, "TMPDIR="+t.TempDir())

			// A probe: its instructions name the directory, which exists
			// after the probe has exited.
			probe := a.serveEra(t, v, false)
			dir := instructionsDir(t, probe)
			probe.close()
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Fatalf("after the probe, %s: %v", dir, err)
			}

			// Another process for the tools: the same directory.
			tools := a.serveEra(t, v, false)
			if got := instructionsDir(t, tools); got != dir {
				t.Fatalf("the tools' process names %s, the probe named %s", got, dir)
			}
			if r := tools.pull(); r.str("path") != dir {
				t.Fatalf("pull ran on %s, want %s", r.str("path"), dir)
			}
			if err := os.WriteFile(filepath.Join(dir, file), []byte("written at "+v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tools.close()

			// A process per request: each call sees the same directory,
			// and the edit made between them.
			one := a.serveEra(t, v, false)
			if r := one.commit("from a process per request"); r.str("path") != dir || fileStats(r)[file] != [2]int{1, 0} {
				t.Fatalf("commit: %s", r.raw)
			}
			one.close()
			two := a.serveEra(t, v, false)
			if r := two.pull(); r.str("path") != dir {
				t.Fatalf("pull ran on %s", r.str("path"))
			}
			two.close()

			// Another host: another directory, which the next server
			// removes once that host has ended (it holds no files).
			other := a.serveEra(t, v, true)
			otherDir := instructionsDir(t, other)
			if otherDir == dir {
				t.Fatalf("two hosts share %s", dir)
			}
			if _, err := os.Stat(otherDir); err != nil {
				t.Fatal(err)
			}
			other.close()
			a.serveEra(t, v, false).close()
			if _, err := os.Stat(filepath.Dir(otherDir)); !os.IsNotExist(err) {
				t.Fatalf("the ended host's empty directory is still there: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
				t.Fatalf("this host's directory lost its file: %v", err)
			}
		})
	}
}
