package author

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClaimText(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Claim
		want string
	}{
		{"cli", Claim{User: "ana", Host: "build-7"}, "ana@build-7"},
		{"cli without host", Claim{User: "ana"}, "ana"},
		{"cli knowing nothing", Claim{}, ""},
		{"serve", Claim{Serve: true, ClientName: "claude-code", ClientVersion: "2.1.0", User: "ana", Host: "build-7"}, "claude-code 2.1.0 (ana@build-7)"},
		{"serve, client without version", Claim{Serve: true, ClientName: "cursor", User: "ana", Host: "h"}, "cursor (ana@h)"},
		{"serve, no clientInfo", Claim{Serve: true, User: "ana", Host: "h"}, "ana@h"},
		{"override replaces both", Claim{Override: "planner-3", HasOverride: true, Serve: true, ClientName: "claude-code", User: "ana", Host: "h"}, "planner-3"},
		{"empty override: serve keeps the client only", Claim{HasOverride: true, Serve: true, ClientName: "claude-code", ClientVersion: "2.1.0", User: "ana", Host: "h"}, "claude-code 2.1.0"},
		{"empty override: the CLI records none", Claim{HasOverride: true, User: "ana", Host: "h"}, ""},
	} {
		if got := tc.c.Text(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCleanKeepsAuthorsFitToRecord(t *testing.T) {
	// A credential pasted into --author never reaches the store.
	key := "AKIA" + "IOSFODNN7EXAMPLF"
	if got := Clean("bot " + key); strings.Contains(got, key) {
		t.Errorf("Clean kept an access key ID: %q", got)
	}
	if got := Clean("https://user:hunter2@example.com"); strings.Contains(got, "hunter2") {
		t.Errorf("Clean kept URL user information: %q", got)
	}
	if got := Clean("ana\n\tbot\x00 x"); got != "ana bot x" {
		t.Errorf("control characters: got %q", got)
	}
	if got := Clean("  a\xffb  "); got != "a b" {
		t.Errorf("invalid UTF-8: got %q", got)
	}
	long := strings.Repeat("é", 200) // 400 bytes
	got := Clean(long)
	if len(got) > MaxBytes || !utf8.ValidString(got) || len(got) < MaxBytes-1 {
		t.Errorf("cut to %d bytes (valid %v), want at most %d on a character boundary", len(got), utf8.ValidString(got), MaxBytes)
	}
	if got := Clean("Zoë \"z\" \\o/"); got != "Zoë \"z\" \\o/" {
		t.Errorf("ordinary text changed: %q", got)
	}
}
