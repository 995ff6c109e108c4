package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Whatever a line holds, the server (mcp-go behind the edge) neither
// panics nor writes anything but whole JSON-RPC 2.0 messages, at most two
// (subscriptions/listen's acknowledgement and result), never a panic
// report, and it goes on serving: a ping after the line is answered.
func FuzzHandleLine(f *testing.F) {
	for _, ex := range readExchanges(f, "testdata/jsonrpc/mcpgo-v1.2.1.txtar") {
		f.Add(ex.request)
	}
	f.Add(`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","id":true,"method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`)
	p := servePipe(f, conformanceEngine())
	n := 0
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			t.Skip("one line is one message")
		}
		p.t = t
		n++
		marker := fmt.Sprintf(`"fuzz-marker-%d"`, n)
		p.send(line)
		p.send(`{"jsonrpc":"2.0","id":` + marker + `,"method":"ping"}`)
		var msgs []string
		for {
			m := p.next()
			var msg reply
			if err := json.Unmarshal([]byte(m), &msg); err != nil || msg.JSONRPC != "2.0" {
				t.Fatalf("wrote %q", m)
			}
			if string(msg.ID) == marker {
				break
			}
			msgs = append(msgs, m)
			if msg.Method == "" && (msg.ID == nil || (msg.Result == nil) == (msg.Error == nil)) {
				t.Fatalf("not a response: %s", m)
			}
			if msg.Error != nil && strings.Contains(msg.Error.Message, "panic") {
				t.Fatalf("panicked: %s", m)
			}
		}
		if len(msgs) > 2 {
			t.Fatalf("%d messages for one line", len(msgs))
		}
	})
}
