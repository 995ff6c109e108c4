package main

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	info := func(v string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Version: v}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	const rev = "803911515041aabbccddeeff0011223344556677"
	for _, tc := range []struct {
		name, stamped string
		info          func() (*debug.BuildInfo, bool)
		want          string
	}{
		{"release stamp wins", "1.2.3", info("v9.9.9"), "1.2.3"},
		{"go install reports the module version", "", info("v0.4.1"), "0.4.1"},
		{"a tagged checkout reports its tag", "", info("v0.4.1", "vcs.revision", rev), "0.4.1"},
		{"checkout: pseudo-version becomes dev+revision", "", info("v0.0.0-20261130150237-803911515041", "vcs.revision", rev, "vcs.modified", "false"), "0.0.0-dev+803911515041"},
		{"dirty checkout", "", info("v0.0.0-20261130150237-803911515041+dirty", "vcs.revision", rev, "vcs.modified", "true"), "0.0.0-dev+803911515041.dirty"},
		{"go install module@commit keeps the pseudo-version", "", info("v0.0.0-20261130150237-803911515041"), "0.0.0-20261130150237-803911515041"},
		{"no VCS stamp", "", info("(devel)"), "0.0.0-dev"},
		{"old Makefile stamp dev", "dev", info("(devel)"), "0.0.0-dev"},
		{"no build info", "", none, "0.0.0-dev"},
	} {
		got := resolveVersion(tc.stamped, tc.info)
		if got != tc.want {
			t.Errorf("%s: resolveVersion(%q) = %q, want %q", tc.name, tc.stamped, got, tc.want)
		}
		if !semverRE().MatchString(got) {
			t.Errorf("%s: %q is not a semantic version", tc.name, got)
		}
	}
}

// TestVersionIsSemver: whatever way the test binary was built (stamped or
// not, -buildvcs on or off), `slivingdoc version` prints a semantic version.
func TestVersionIsSemver(t *testing.T) {
	out, err := exec.Command(cliBinary(t), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "slivingdoc ")
	if !ok || !semverRE().MatchString(v) {
		t.Fatalf("version output %q is not \"slivingdoc <semver>\"", out)
	}
}

// binaryVersion is what the built binary reports, for tests that compare
// the MCP serverInfo with it.
func binaryVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "slivingdoc ")
}
