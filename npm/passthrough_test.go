//go:build unix

package npm_test

// The launcher is invisible: arguments, stdin and stdout bytes, the exit
// status and a death by signal pass through unchanged, and the stop signals
// a host sends to the launcher reach the binary. A stand-in "binary" (a
// shell script, packed and verified like the real one) makes each behaviour
// observable.

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const fakeVersion = "0.0.0-fake"

// fakeBinary does what its first argument says.
const fakeBinary = `#!/bin/sh
case "$1" in
exit) exit "$2" ;;
kill) kill -"$2" $$ ;;
cat) exec cat ;;
args) shift; for a in "$@"; do printf '<%s>\n' "$a"; done ;;
wait) trap 'exit 42' TERM; trap 'exit 43' INT; echo ready >&2; while :; do sleep 0.05; done ;;
esac
`

// fakeProject installs the launcher with the stand-in as the host's binary
// and returns the path of the installed `slivingdoc` command.
var fakeProject = sync.OnceValues(func() (string, error) {
	dist := filepath.Join(scratch, "fake-dist")
	if err := os.MkdirAll(dist, 0o755); err != nil {
		return "", err
	}
	asset := "slivingdoc-v" + fakeVersion + "-" + assetOf(hostPlatform())
	sums := fmt.Sprintf("%x  %s\n", sha256.Sum256([]byte(fakeBinary)), asset)
	if err := os.WriteFile(filepath.Join(dist, asset), []byte(fakeBinary), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dist, "SHA256SUMS"), []byte(sums), 0o644); err != nil {
		return "", err
	}
	tarballs, err := packTarballs(dist, fakeVersion, hostPlatform())
	if err != nil {
		return "", err
	}
	project := filepath.Join(scratch, "fake-project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		return "", err
	}
	if err := installInto(project, tarballs); err != nil {
		return "", err
	}
	return filepath.Join(project, "node_modules", ".bin", "slivingdoc"), nil
})

func fakeLauncher(t *testing.T) string {
	t.Helper()
	needNode(t)
	if hostPlatform() == "" {
		t.Skip("no release target for this host")
	}
	bin, err := fakeProject()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestLauncherPassesExitStatus(t *testing.T) {
	bin := fakeLauncher(t)
	for _, code := range []int{0, 1, 3, 125, 255} {
		res := runIn(t, t.TempDir(), "", bin, "exit", fmt.Sprint(code))
		if res.code != code || res.stdout != "" || res.stderr != "" {
			t.Errorf("exit %d came out as %d (stdout %q, stderr %q)", code, res.code, res.stdout, res.stderr)
		}
	}
	// And through npx, the way MCP hosts start it.
	res := runIn(t, filepath.Dir(filepath.Dir(filepath.Dir(bin))), "", "npx", "slivingdoc", "exit", "9")
	if res.code != 9 {
		t.Errorf("npx: exit 9 came out as %d (stderr %q)", res.code, res.stderr)
	}
}

func TestLauncherPassesDeathBySignal(t *testing.T) {
	bin := fakeLauncher(t)
	for name, sig := range map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "KILL": syscall.SIGKILL} {
		res := runIn(t, t.TempDir(), "", bin, "kill", name)
		ws := res.state.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("binary killed by %v: launcher ended with %v (stderr %q)", sig, res.state, res.stderr)
		}
	}
}

func TestLauncherForwardsStopSignals(t *testing.T) {
	bin := fakeLauncher(t)
	for sig, want := range map[syscall.Signal]int{syscall.SIGTERM: 42, syscall.SIGINT: 43} {
		cmd := exec.Command(bin, "wait")
		cmd.Env = npmEnv()
		// Its own process group, so only the launcher gets the signal, as
		// when a host signals the process it started.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make([]byte, len("ready\n"))
		if _, err := io.ReadFull(stderr, ready); err != nil || string(ready) != "ready\n" {
			t.Fatalf("binary did not start: %q %v", ready, err)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("%v to the launcher did not stop the binary", sig)
		}
		if got := cmd.ProcessState.ExitCode(); got != want {
			t.Errorf("%v: launcher ended with %v, want the binary's exit %d from its handler", sig, cmd.ProcessState, want)
		}
	}
}

func TestLauncherPassesStdioAndArgsUnchanged(t *testing.T) {
	bin := fakeLauncher(t)

	// 1 MiB of every byte value, deterministic, with no line structure.
	in := make([]byte, 1<<20)
	for i, x := 0, uint32(1); i < len(in); i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		in[i] = byte(x)
	}
	res := runIn(t, t.TempDir(), string(in), bin, "cat")
	if res.code != 0 || !bytes.Equal([]byte(res.stdout), in) || res.stderr != "" {
		t.Errorf("stdin->stdout: exit %d, %d bytes out of %d, equal %v, stderr %q",
			res.code, len(res.stdout), len(in), res.stdout == string(in), res.stderr)
	}

	args := []string{"", " ", "two words", `"quoted"`, "$HOME", "*", "--flag=x", "naïve ✓", "new\nline"}
	res = runIn(t, t.TempDir(), "", bin, append([]string{"args"}, args...)...)
	var want strings.Builder
	for _, a := range args {
		fmt.Fprintf(&want, "<%s>\n", a)
	}
	if res.code != 0 || res.stdout != want.String() {
		t.Errorf("args came out as %q, want %q", res.stdout, want.String())
	}
}
