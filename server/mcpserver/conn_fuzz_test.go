package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Whatever a line holds, the server neither panics nor writes anything but
// whole JSON-RPC 2.0 messages, at most one response (and notifications,
// such as subscriptions/listen's acknowledgement), never a panic report,
// and it ends cleanly at EOF. Each
// input gets a server of its own: responses to tool calls are written from
// other goroutines, so on a shared server they could not be told apart.
func FuzzHandleLine(f *testing.F) {
	for _, ex := range readExchanges(f, "testdata/jsonrpc/mcpgo-v1.2.1.txtar") {
		f.Add(ex.request)
	}
	f.Add(`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","id":true,"method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"~sd1"}}`)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			t.Skip("one line is one message")
		}
		p := servePipe(t, conformanceEngine())
		p.send(line)
		p.in.Close()
		responses := 0
		deadline := time.After(10 * time.Second)
		for {
			var m string
			var ok bool
			select {
			case m, ok = <-p.lines:
			case <-deadline:
				t.Fatal("the server did not end after EOF")
			}
			if !ok {
				break
			}
			var msg reply
			if err := json.Unmarshal([]byte(m), &msg); err != nil || msg.JSONRPC != "2.0" {
				t.Fatalf("wrote %q", m)
			}
			if msg.Method != "" {
				continue // a notification
			}
			responses++
			if msg.ID == nil || (msg.Result == nil) == (msg.Error == nil) {
				t.Fatalf("not a response: %s", m)
			}
			if msg.Error != nil && strings.Contains(msg.Error.Message, "panic") {
				t.Fatalf("panicked: %s", m)
			}
		}
		if responses > 1 {
			t.Fatalf("%d responses for one line", responses)
		}
	})
}
