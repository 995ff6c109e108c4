package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// Whatever a line holds, the server neither panics nor writes anything but
// whole JSON-RPC 2.0 messages, at most two (subscriptions/listen's
// acknowledgement and result), and never a panic report.
func FuzzHandleLine(f *testing.F) {
	for _, ex := range readExchanges(f, "testdata/jsonrpc/mcpgo-v1.2.1.txtar") {
		f.Add(ex.request)
	}
	a, err := New(conformanceEngine(), Options{Version: "1", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			t.Skip("one line is one message")
		}
		out := &syncBuffer{}
		c := &conn{a: a, out: out, inflight: map[string]*inflightCall{}}
		c.handle(context.Background(), []byte(line+"\n"))
		c.calls.Wait()
		msgs := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if out.String() == "" {
			msgs = nil
		}
		if len(msgs) > 2 {
			t.Fatalf("%d messages for one line", len(msgs))
		}
		for _, m := range msgs {
			var msg reply
			if err := json.Unmarshal([]byte(m), &msg); err != nil || msg.JSONRPC != "2.0" {
				t.Fatalf("wrote %q", m)
			}
			if msg.Method == "" && (msg.ID == nil || (msg.Result == nil) == (msg.Error == nil)) {
				t.Fatalf("not a response: %s", m)
			}
			if msg.Error != nil && strings.HasPrefix(msg.Error.Message, "internal panic") {
				t.Fatalf("panicked: %s", m)
			}
		}
	})
}
