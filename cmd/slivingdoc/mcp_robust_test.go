package main

// A host cannot wedge the server: stderr nobody reads, signals during a
// commit, a closed stdout, a cancelled commit, hostile ids and lines. Each
// test drives the built binary over raw stdio, as a host would.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is one `slivingdoc serve` with raw pipes.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
	lines  chan string
	stderr *lockedBuffer
	waited chan error
}

// startServe starts serve for a; stderr is the buffer unless errW is set.
func startServe(t *testing.T, a *agent, errW *os.File, flags ...string) *proc {
	t.Helper()
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(a.bin, append([]string{"serve", "--workspace-root", a.dir}, flags...)...)
	cmd.Env = serveEnv(a.env)
	p := &proc{t: t, cmd: cmd, stderr: &lockedBuffer{}, lines: make(chan string, 64), waited: make(chan error, 1)}
	if errW != nil {
		cmd.Stderr = errW
	} else {
		cmd.Stderr = p.stderr
	}
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.out, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(p.out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	go func() { p.waited <- cmd.Wait() }()
	t.Cleanup(func() {
		p.in.Close()
		select {
		case <-p.waited:
		case <-nearTestDeadline(t):
			cmd.Process.Kill()
			t.Errorf("serve did not exit\n%s", p.stderr)
		}
	})
	return p
}

func (p *proc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *proc) next() reply {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("server closed stdout\nstderr:\n%s", p.stderr)
		}
		var r reply
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.JSONRPC != "2.0" {
			p.t.Fatalf("stdout carries %q", line)
		}
		r.line = line
		return r
	case <-nearTestDeadline(p.t):
		p.t.Fatalf("no answer\nstderr:\n%s", p.stderr)
	}
	return reply{}
}

// call sends a request with the raw id and returns its response.
func (p *proc) call(id, method, params string) reply {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	for {
		if r := p.next(); string(r.ID) == id {
			return r
		}
	}
}

func (p *proc) initialize() {
	p.t.Helper()
	if r := p.call("0", "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"robust","version":"0"}}`); r.Error != nil {
		p.t.Fatalf("initialize: %s", r.line)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// exit waits for the process and returns its wait status.
func (p *proc) exit(within time.Duration) syscall.WaitStatus {
	p.t.Helper()
	select {
	case err := <-p.waited:
		p.waited <- err // for the cleanup
		return p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	case <-nearTestDeadline(p.t):
		p.t.Fatalf("serve still running (it should have ended within %v)\nstderr:\n%s", within, p.stderr)
	}
	return 0
}

type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	line string
}

func (r reply) toolOK() bool {
	var res struct {
		IsError           bool
		StructuredContent struct{ Code string }
	}
	return r.Error == nil && json.Unmarshal(r.Result, &res) == nil && !res.IsError && res.StructuredContent.Code == "OK"
}

// A host that pipes stderr and never reads it (mcp-go <= 0.49 does) fills
// the pipe after ~250 calls; the server must go on answering, and report
// the records it had to drop once stderr is read again.
func TestServeNeverBlocksOnUndrainedStderr(t *testing.T) {
	a := newNotebook(t, backends[0]).agent("a")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := startServe(t, a, w)
	w.Close() // the child holds the write end; nobody reads r yet
	p.initialize()
	for i := range 1000 {
		id := strconv.Itoa(i + 1)
		if res := p.call(id, "tools/call", `{"name":"notes_pull","arguments":{}}`); !res.toolOK() {
			t.Fatalf("call %d: %s", i+1, res.line)
		}
	}
	p.in.Close()
	logs, _ := io.ReadAll(r) // drained at last, until the server exits
	if st := p.exit(20 * time.Second); st.ExitStatus() != 0 {
		t.Fatalf("exit %v", st)
	}
	if !strings.Contains(string(logs), "log records dropped") || !strings.Contains(string(logs), "dropped=") {
		t.Fatalf("no record reports the dropped records (%d bytes of stderr); it ends:\n%s", len(logs), tail(string(logs), 2000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// holdStoreLock takes the file store's cross-process lock, so the server's
// next store write waits, and returns the release.
func holdStoreLock(t *testing.T, store string) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(store, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// waitStaged waits until the server staged an upload in the file store,
// which it does just before taking the store lock.
func waitStaged(t *testing.T, store string, before int) {
	t.Helper()
	stop := nearTestDeadline(t)
	for {
		ents, _ := os.ReadDir(filepath.Join(store, ".tmp"))
		if len(ents) > before {
			return
		}
		select {
		case <-stop:
			t.Fatal("the commit never reached the store")
		case <-time.After(5 * time.Millisecond): // polling pace only
		}
	}
}

func stagedCount(store string) int {
	ents, _ := os.ReadDir(filepath.Join(store, ".tmp"))
	return len(ents)
}

// SIGTERM or SIGHUP during a commit ends the server like end of input:
// the commit finishes and is answered, the process exits 0, and the next
// call needs no recovery; verify finds the store whole.
func TestServeSignalDuringCommit(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX signals")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			nb := newNotebook(t, backends[0])
			a := nb.agent("a")
			store := storeDir(nb)
			p := startServe(t, a, nil)
			p.initialize()
			if r := p.call("1", "tools/call", `{"name":"notes_pull","arguments":{}}`); !r.toolOK() {
				t.Fatal(r.line)
			}
			a.write("a.md", "one\n")
			if r := p.call("2", "tools/call", `{"name":"notes_commit","arguments":{"message":"one"}}`); !r.toolOK() {
				t.Fatal(r.line)
			}
			a.write("a.md", "one\ntwo\n")
			before := stagedCount(store)
			release := holdStoreLock(t, store)
			p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notes_commit","arguments":{"message":"two"}}}`)
			waitStaged(t, store, before)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// The signal is handled while the commit waits on the lock:
			// the server logs that it is stopping before the lock goes.
			waitStopping(t, p)
			release()
			if r := p.next(); string(r.ID) != "3" || !r.toolOK() {
				t.Fatalf("the commit in flight at %v was answered %s\nstderr:\n%s", sig, r.line, p.stderr)
			}
			if st := p.exit(20 * time.Second); st.Signaled() || st.ExitStatus() != 0 {
				t.Fatalf("after %v: %v\nstderr:\n%s", sig, st, p.stderr)
			}
			if strings.Contains(p.stderr.String(), "RECOVERY") {
				t.Fatalf("recovery logged:\n%s", p.stderr)
			}
			// The next call: a fresh server, an ordinary pull, nothing to recover.
			q := startServe(t, a, nil)
			q.initialize()
			if r := q.call("1", "tools/call", `{"name":"notes_pull","arguments":{}}`); !r.toolOK() {
				t.Fatalf("next pull: %s", r.line)
			}
			q.in.Close()
			q.exit(20 * time.Second)
			if s := q.stderr.String(); strings.Contains(s, "RECOVERY") || strings.Contains(s, "recover") {
				t.Fatalf("the next call recovered:\n%s", s)
			}
			if got := nb.agent("b").pull(); got.generation != 2 {
				t.Fatalf("generation %d after the interrupted commit, want 2", got.generation)
			}
			if o := a.run("verify"); o.code != 0 {
				t.Fatalf("verify: %s", o)
			}
		})
	}
}

// waitStopping returns once the server has logged that a signal stops it
// (conn.go: "stopping", why "signal"): a condition, not a guess at how
// long delivering a signal takes on a loaded machine.
func waitStopping(t *testing.T, p *proc) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		s := p.stderr.String()
		if i := strings.Index(s, "stopping"); i >= 0 && strings.Contains(s[i:], "signal") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never logged that the signal stops it; stderr:\n%s", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A host that closes its end of stdout: the server's next write fails,
// and it ends cleanly (exit 0), not by SIGPIPE mid-call.
func TestServeClosedStdoutEndsCleanly(t *testing.T) {
	a := newNotebook(t, backends[0]).agent("a")
	p := startServe(t, a, nil)
	p.initialize()
	p.out.Close()
	// Ignore the write error: the server may already be gone.
	io.WriteString(p.in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_pull","arguments":{}}}`+"\n")
	io.WriteString(p.in, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	if st := p.exit(20 * time.Second); st.Signaled() || st.ExitStatus() != 0 {
		t.Fatalf("after stdout closed: %v (signal %v)\nstderr:\n%s", st, st.Signal(), p.stderr)
	}
}

// A commit the client cancels while it waits on the store gets no
// response at all, publishes nothing, and its record says cancelled with
// the client's reason.
func TestServeCancelledCommitIsNotAnsweredNorPublished(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	store := storeDir(nb)
	p := startServe(t, a, nil)
	p.initialize()
	if r := p.call("1", "tools/call", `{"name":"notes_pull","arguments":{}}`); !r.toolOK() {
		t.Fatal(r.line)
	}
	a.write("a.md", "one\n")
	if r := p.call("2", "tools/call", `{"name":"notes_commit","arguments":{"message":"one"}}`); !r.toolOK() {
		t.Fatal(r.line)
	}
	a.write("a.md", "one\ntwo\n")
	before := stagedCount(store)
	release := holdStoreLock(t, store)
	p.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"notes_commit","arguments":{"message":"two"}}}`)
	waitStaged(t, store, before)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c","reason":"user hit stop"}}`)
	// The server reads its input in order: once the ping after the
	// cancellation is answered, the call is marked cancelled, however
	// loaded the machine.
	if r := p.call("3", "ping", `{}`); r.Error != nil {
		t.Fatal(r.line)
	}
	release()
	stop := nearTestDeadline(t)
	for !strings.Contains(p.stderr.String(), "code=CANCELLED") {
		select {
		case <-stop:
			t.Fatalf("no cancelled record\n%s", p.stderr)
		case <-time.After(10 * time.Millisecond): // polling pace only
		}
	}
	if r := p.call("4", "ping", `{}`); r.Error != nil {
		t.Fatal(r.line)
	}
	select {
	case line := <-p.lines:
		t.Fatalf("unexpected message after the ping: %s", line)
	default:
	}
	logs := p.stderr.String()
	if !strings.Contains(logs, `reason="user hit stop"`) || strings.Contains(logs, "STORAGE_FAILURE") {
		t.Fatalf("the cancellation record:\n%s", logs)
	}
	p.in.Close()
	p.exit(20 * time.Second)
	if g := nb.generation(); g != 1 {
		t.Fatalf("generation %d: the cancelled commit was published", g)
	}
	if o := a.run("verify"); o.code != 0 {
		t.Fatalf("verify: %s", o)
	}
}

// Ids come back byte for byte, including integers above 2^53 that a
// float64 decoder rounds; ids MCP does not allow are refused as invalid
// requests with a null id.
func TestServeEchoesIDsExactlyAndRefusesInvalidOnes(t *testing.T) {
	a := newNotebook(t, backends[0]).agent("a")
	p := startServe(t, a, nil)
	p.initialize()
	for _, id := range []string{`9007199254740993`, `"x"`, `-12345678901234567890`, `"9007199254740993"`} {
		if r := p.call(id, "ping", `{}`); r.Error != nil || string(r.ID) != id {
			t.Errorf("ping with id %s answered %s", id, r.line)
		}
	}
	if r := p.call(`9007199254740993`, "tools/call", `{"name":"notes_pull","arguments":{}}`); !r.toolOK() {
		t.Errorf("tools/call with a big id: %s", r.line)
	}
	for _, id := range []string{`true`, `{}`, `[]`, `null`, `1.5`, `1e3`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		r := p.next()
		if string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("id %s answered %s, want -32600 with id null", id, r.line)
		}
	}
	if r := p.call(`"after"`, "ping", `{}`); r.Error != nil {
		t.Errorf("serving stopped: %s", r.line)
	}
}

// A 20 MiB line is answered with an error naming its id, the server keeps
// serving, and its memory stays far below the line's size.
func TestServeRefusesAHugeLineWithoutHoldingIt(t *testing.T) {
	a := newNotebook(t, backends[0]).agent("a")
	p := startServe(t, a, nil)
	p.initialize()
	huge := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"notes_commit","arguments":{"message":"` +
		strings.Repeat("x", 20<<20) + `"}}}`
	sent := make(chan error, 1)
	go func() { _, err := io.WriteString(p.in, huge+"\n"); sent <- err }()
	r := p.next()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if string(r.ID) != "5" || r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("20 MiB line answered %.300s", r.line)
	}
	if r := p.call("6", "ping", `{}`); r.Error != nil {
		t.Fatalf("after the huge line: %s", r.line)
	}
	if runtime.GOOS == "linux" {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				// A server that held the line would peak above 20 MiB on
				// top of its ~15 MiB baseline; the bound is the 4 MiB kept
				// prefix and its decoding.
				if kb > 40<<10 {
					t.Errorf("peak resident memory %d KiB after a 20 MiB line", kb)
				}
			}
		}
	}
}
