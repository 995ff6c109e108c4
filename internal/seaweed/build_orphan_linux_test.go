package seaweed

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperEnv makes the test binary, run again, act as a process that starts
// a build child and then waits to be killed.
const helperEnv = "SLIVINGDOC_SEAWEED_TEST_BUILD_PARENT"

// TestBuildChildParent is not a test: it is the parent process of
// TestBuildChildDiesWithItsParent (run only with helperEnv set).
func TestBuildChildParent(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper process of TestBuildChildDiesWithItsParent")
	}
	child := exec.Command("sleep", "3600") // stands in for `go build`
	if err := startBuildChild(child); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("child", child.Process.Pid)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the test kills us
	os.Exit(0)
}

// A test binary that times out while it builds SeaweedFS dies with SIGKILL
// or a panic; the go build it started must die with it instead of running
// on for minutes (and filling the cache with a temporary binary).
func TestBuildChildDiesWithItsParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^TestBuildChildParent$", "-test.count=1")
	parent.Env = append(os.Environ(), helperEnv+"=1")
	stdin, err := parent.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper said %q: %v", line, err)
	}
	f := strings.Fields(line)
	if len(f) != 2 || f[0] != "child" {
		t.Fatalf("helper said %q", line)
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	if !alive(pid) {
		t.Fatalf("the build child %d is not running before its parent dies", pid)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	// The kernel delivers the parent-death signal when the parent exits;
	// only the reaping of the child takes a moment. No deadline here: the
	// test binary's timeout is the bound, and a child that survives fails
	// the test by it.
	for alive(pid) {
		time.Sleep(10 * time.Millisecond) // polling pace only
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
