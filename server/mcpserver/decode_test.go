package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// TestDecodeRejects lists every input the strict decode refuses, with the
// reason token an agent branches on.
func TestDecodeRejects(t *testing.T) {
	long := "/" + strings.Repeat("a", maxPathBytes) // 4,097 bytes
	cases := []struct {
		name, tool, raw, reason string
	}{
		{"unknown field", ToolPull, `{"dir":"/x"}`, diag.ReasonInvalidArgument},
		{"message on pull", ToolPull, `{"message":"m"}`, diag.ReasonInvalidArgument},
		{"duplicate path", ToolPull, `{"path":"/a","path":"/b"}`, diag.ReasonInvalidArgument},
		{"duplicate message", ToolCommit, `{"message":"a","message":"b"}`, diag.ReasonInvalidArgument},
		{"null path", ToolPull, `{"path":null}`, diag.ReasonInvalidArgument},
		{"null message", ToolCommit, `{"message":null}`, diag.ReasonInvalidArgument},
		{"array arguments", ToolPull, `[]`, diag.ReasonInvalidArgument},
		{"string arguments", ToolPull, `"x"`, diag.ReasonInvalidArgument},
		{"number path", ToolPull, `{"path":1}`, diag.ReasonInvalidArgument},
		{"bool message", ToolCommit, `{"message":true}`, diag.ReasonInvalidArgument},
		{"object path", ToolPull, `{"path":{"a":"b"}}`, diag.ReasonInvalidArgument},
		{"invalid utf8", ToolCommit, "{\"message\":\"a\xff\"}", diag.ReasonInvalidArgument},
		{"relative path", ToolPull, `{"path":"notes"}`, diag.ReasonInvalidArgument},
		{"tilde without slash", ToolPull, `{"path":"~"}`, diag.ReasonInvalidArgument},
		{"nul in path", ToolPull, `{"path":"/a\u0000b"}`, diag.ReasonInvalidArgument},
		{"path over 4096 bytes", ToolPull, `{"path":"` + long + `"}`, diag.ReasonInvalidArgument},
		{"4,000-byte path component", ToolPull, `{"path":"/nb/` + strings.Repeat("c", 4000) + `"}`, diag.ReasonInvalidArgument},
		{"256-byte path component", ToolCommit, `{"message":"m","path":"/nb/` + strings.Repeat("n", 256) + `/x"}`, diag.ReasonInvalidArgument},
		{"missing message", ToolCommit, `{}`, diag.ReasonInvalidArgument},
		{"absent arguments on commit", ToolCommit, ``, diag.ReasonInvalidArgument},
		{"nul in message", ToolCommit, `{"message":"a\u0000"}`, diag.ReasonInvalidArgument},
		{"message over 16384 bytes", ToolCommit, `{"message":"` + strings.Repeat("é", 8193) + `"}`, diag.ReasonInvalidArgument},
		{"empty message", ToolCommit, `{"message":""}`, diag.ReasonBlankMessage},
		{"lone high surrogate in message", ToolCommit, `{"message":"a\ud800b"}`, diag.ReasonInvalidArgument},
		{"lone low surrogate in message", ToolCommit, `{"message":"\uDC00"}`, diag.ReasonInvalidArgument},
		{"high surrogate at the end", ToolCommit, `{"message":"x\ud83d"}`, diag.ReasonInvalidArgument},
		{"two high surrogates", ToolCommit, `{"message":"\ud83d\ud83d"}`, diag.ReasonInvalidArgument},
		{"lone surrogate in path", ToolPull, `{"path":"/a\udfff"}`, diag.ReasonInvalidArgument},
		{"white space message", ToolCommit, `{"message":" \t\n\r\u00a0\u2003\u3000\u0085"}`, diag.ReasonBlankMessage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeArgs(json.RawMessage(c.raw), c.tool)
			if err == nil {
				t.Fatalf("decodeArgs(%s) accepted", c.raw)
			}
			if err.Code != diag.CodeInvalidRequest || err.Reason != c.reason || err.Action != diag.ActionFixRequest || err.Retryable {
				t.Fatalf("got %s/%s/%s retryable=%t, want INVALID_REQUEST/%s/FIX_REQUEST", err.Code, err.Reason, err.Action, err.Retryable, c.reason)
			}
			if err.Message == "" {
				t.Fatal("empty message")
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory:", err)
	}
	// 4,096 bytes in components of 255 bytes (the other bound) and slashes.
	maxPath := strings.Repeat("/"+strings.Repeat("a", 255), 15) + "/" + strings.Repeat("b", 255)
	maxMsg := strings.Repeat("é", rules.MaxMessageBytes/2)
	cases := []struct {
		name, tool, raw string
		want            args
	}{
		{"absent arguments", ToolPull, ``, args{}},
		{"null arguments", ToolPull, `null`, args{}},
		{"empty object", ToolPull, `{}`, args{}},
		{"empty path", ToolPull, `{"path":""}`, args{}},
		{"absolute path", ToolPull, `{"path":"/w/notes"}`, args{path: "/w/notes"}},
		{"tilde path", ToolPull, `{"path":"~/notes"}`, args{path: filepath.Join(home, "notes")}},
		{"path of exactly 4096 bytes, components of 255", ToolPull, `{"path":"` + maxPath + `"}`, args{path: maxPath}},
		{"message kept byte for byte", ToolCommit, `{"message":"  fix\ttypo \u200b\n","path":""}`, args{message: "  fix\ttypo \u200b\n", hasMessage: true}},
		{"surrogate pair", ToolCommit, `{"message":"smile \ud83d\ude00 \\ud800 escaped"}`, args{message: "smile 😀 \\ud800 escaped", hasMessage: true}},
		{"message of exactly 16384 bytes", ToolCommit, `{"message":"` + maxMsg + `"}`, args{message: maxMsg, hasMessage: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodeArgs(json.RawMessage(c.raw), c.tool)
			if err != nil {
				t.Fatalf("decodeArgs(%.80s) = %v", c.raw, err)
			}
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
