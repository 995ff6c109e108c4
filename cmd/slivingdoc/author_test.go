package main

import (
	"flag"
	"io"
	"testing"
)

// The author a CLI commit or a serve process claims: --author wins over
// SLIVINGDOC_AUTHOR, either one replaces the user and host, and an empty
// one (given, not absent) turns the user and host off.
func TestAuthorFlagAndVariablePrecedence(t *testing.T) {
	local := func() (string, string) { return "ana", "build-7" }
	for _, tc := range []struct {
		name        string
		args        []string
		env         string
		envSet      bool
		cli, served string // Text() for the CLI, and for serve with client "claude-code 2.1.0"
	}{
		{"neither", nil, "", false, "ana@build-7", "claude-code 2.1.0 (ana@build-7)"},
		{"variable", nil, "planner-3", true, "planner-3", "planner-3"},
		{"empty variable", nil, "", true, "", "claude-code 2.1.0"},
		{"flag", []string{"--author", "reviewer"}, "", false, "reviewer", "reviewer"},
		{"flag over variable", []string{"--author=reviewer"}, "planner-3", true, "reviewer", "reviewer"},
		{"empty flag over variable", []string{"--author="}, "planner-3", true, "", "claude-code 2.1.0"},
		{"empty flag, separate argument", []string{"-author", ""}, "", false, "", "claude-code 2.1.0"},
		{"flag is cleaned", []string{"--author", "bot\nx"}, "", false, "bot x", "bot x"},
	} {
		fs := flag.NewFlagSet("commit", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		af := addAuthorFlag(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		env := func() (string, bool) { return tc.env, tc.envSet }
		c := af.claim(env, local)
		if got := c.Text(); got != tc.cli {
			t.Errorf("%s: the CLI claims %q, want %q", tc.name, got, tc.cli)
		}
		c.Serve, c.ClientName, c.ClientVersion = true, "claude-code", "2.1.0"
		if got := c.Text(); got != tc.served {
			t.Errorf("%s: serve claims %q, want %q", tc.name, got, tc.served)
		}
	}
}
