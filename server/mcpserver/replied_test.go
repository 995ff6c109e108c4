package mcpserver

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// replyCounter is an output that counts the lines written to it.
type replyCounter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines int
}

func (w *replyCounter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines += bytes.Count(p, []byte("\n"))
	return w.buf.Write(p)
}

func (w *replyCounter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines
}

// replierEngine is a fake engine that records, at each Replied, how many
// lines the adapter had written.
type replierEngine struct {
	fakeEngine
	out     *replyCounter
	mu      sync.Mutex
	replied []int
}

func (e *replierEngine) Replied() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.replied = append(e.replied, e.out.count())
}

// An engine that leaves work for after its replies is told once per
// tool call, after that call's reply is written: the work never delays
// a reply.
func TestRepliedFollowsEachToolCallsReply(t *testing.T) {
	out := &replyCounter{}
	ok := func(context.Context, string) (*server.Result, error) { return &server.Result{Path: "/nb"}, nil }
	eng := &replierEngine{out: out, fakeEngine: fakeEngine{dir: "/nb", pull: ok,
		commit: func(ctx context.Context, path, _ string) (*server.Result, error) { return ok(ctx, path) }}}
	a, err := New(eng, Options{Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notes_commit","arguments":{"message":"m"}}}`,
	}, "\n") + "\n"
	if err := a.Serve(context.Background(), strings.NewReader(in), out); err != nil {
		t.Fatal(err)
	}
	eng.mu.Lock()
	defer eng.mu.Unlock()
	if len(eng.replied) != 1 || eng.replied[0] != 2 {
		t.Fatalf("Replied saw %v lines written, want once, after both replies (2)\n%s", eng.replied, out.buf.String())
	}
	if !strings.Contains(out.buf.String(), `"id":2,"result"`) {
		t.Fatalf("no reply to the tool call:\n%s", out.buf.String())
	}
}
