package commit

import (
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// A commit message is refused before the call starts with the reason an
// agent acts on: BLANK_MESSAGE for one with nothing to say, INVALID_ARGUMENT
// for one that breaks the input rules; any other message passes.
func TestCheckMessage(t *testing.T) {
	for _, tc := range []struct {
		name, message, reason string
	}{
		{"one line", "fix the intro", ""},
		{"several lines", "title\n\nbody, with ünïcode", ""},
		{"at the bound", strings.Repeat("a", rules.MaxMessageBytes), ""},
		{"empty", "", diag.ReasonBlankMessage},
		{"white space", " \t\n", diag.ReasonBlankMessage},
		{"past the bound", strings.Repeat("a", rules.MaxMessageBytes+1), diag.ReasonInvalidArgument},
		{"NUL", "a\x00b", diag.ReasonInvalidArgument},
		{"not UTF-8", "a\xffb", diag.ReasonInvalidArgument},
	} {
		err := CheckMessage(tc.message)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s: refused (%v), want accepted", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted, want %s", tc.name, tc.reason)
			continue
		}
		if err.Code != diag.CodeInvalidRequest || err.Reason != tc.reason {
			t.Errorf("%s: %s/%s, want %s/%s", tc.name, err.Code, err.Reason, diag.CodeInvalidRequest, tc.reason)
		}
	}
}
