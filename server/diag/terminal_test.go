package diag

import "testing"

func TestTerminalSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"notes/a.md", "notes/a.md"},
		{"tab\there", "tab\there"},
		{"héllo wörld ✓", "héllo wörld ✓"},
		{"esc\x1b[31mred", `esc\x1b[31mred`},
		{"bell\a", `bell\x07`},
		{"nl\nx", `nl\nx`[:2] + `\x0a` + "x"},
		{"del\x7f", `del\x7f`},
		{"c1\u0085", `c1\x85`},
		{"evil\u202Egnp.md", `evil\u202egnp.md`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"mark\u200Fx", `mark\u200fx`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"cut\xe2\x82", `cut\xe2\x82`},
	} {
		if got := TerminalSafe(c.in); got != c.want {
			t.Errorf("TerminalSafe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
