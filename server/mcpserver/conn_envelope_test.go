package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// reply is a decoded JSON-RPC response.
type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"` // set on a notification
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeReply(t *testing.T, line string) reply {
	t.Helper()
	var r reply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("not JSON-RPC: %s", line)
	}
	if r.JSONRPC != "2.0" {
		t.Fatalf("jsonrpc %q in %s", r.JSONRPC, line)
	}
	return r
}

func TestPingGetsEmptyResult(t *testing.T) {
	p := servePipe(t, conformanceEngine())
	p.send(`{"jsonrpc":"2.0","id":"a","method":"ping"}`)
	r := decodeReply(t, p.next())
	if string(r.ID) != `"a"` || string(r.Result) != `{}` || r.Error != nil {
		t.Fatalf("ping answered %+v", r)
	}
}

func TestUnknownMethodIsMethodNotFound(t *testing.T) {
	p := servePipe(t, conformanceEngine())
	p.send(`{"jsonrpc":"2.0","id":4,"method":"notes/delete"}`)
	r := decodeReply(t, p.next())
	if string(r.ID) != `4` || r.Error == nil || r.Error.Code != -32601 || r.Result != nil {
		t.Fatalf("unknown method answered %+v", r)
	}
}

// A line that is not JSON gets -32700 with a null ID, and the connection
// goes on serving.
func TestParseErrorHasNullIDAndServingContinues(t *testing.T) {
	p := servePipe(t, conformanceEngine())
	p.send(`{"jsonrpc":"2.0","id":5,"method":`)
	r := decodeReply(t, p.next())
	if string(r.ID) != `null` || r.Error == nil || r.Error.Code != -32700 {
		t.Fatalf("parse error answered %+v", r)
	}
	p.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if r := decodeReply(t, p.next()); string(r.ID) != `6` || r.Error != nil {
		t.Fatalf("ping after a parse error answered %+v", r)
	}
}

func TestNotificationGetsNoReply(t *testing.T) {
	p := servePipe(t, conformanceEngine())
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
	p.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if r := decodeReply(t, p.next()); string(r.ID) != `7` {
		t.Fatalf("first message after two notifications is %+v, want the ping's reply", r)
	}
}

// The server answers with its own envelope only, and a batch is refused
// as a whole rather than half-served.
func TestBatchIsRefused(t *testing.T) {
	p := servePipe(t, conformanceEngine())
	p.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	r := decodeReply(t, p.next())
	if string(r.ID) != `null` || r.Error == nil || r.Error.Code != -32700 {
		t.Fatalf("batch answered %+v", r)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := decodeReply(t, p.next()); string(r.ID) != `3` {
		t.Fatalf("batch members were served: %+v", r)
	}
}

// Every answer carries the id exactly as the client wrote it: a string
// with escapes and characters encoding/json would re-escape, an integer
// above 2^53, in a response, a tool result and a subscription's body.
func TestIDsAreEchoedByteForByte(t *testing.T) {
	p := servePipe(t, conformanceEngine())
	modern := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, id := range []string{`"a<b>&\u00e9\/"`, `9007199254740993`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if got := p.next(); got != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` {
			t.Errorf("ping %s answered %s", id, got)
		}
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"notes_pull","arguments":{}}}`)
		if got := p.next(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":`+id+`,"result":{`) {
			t.Errorf("tools/call %s answered %s", id, got)
		}
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + modern + `}}`)
		for range 2 {
			if got := p.next(); !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":`+id+`}`) {
				t.Errorf("subscriptions/listen %s: %s", id, got)
			}
		}
	}
}

// A modern tools/list without the client's capabilities is told so, not
// that its cursor is wrong.
func TestToolsListWithoutCapabilitiesIsToldSo(t *testing.T) {
	p := servePipe(t, conformanceEngine())
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	r := decodeReply(t, p.next())
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "clientCapabilities") {
		t.Fatalf("answered %+v", r)
	}
}
