package main

import (
	"runtime/debug"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	info := func(v string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: v}}, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, tc := range []struct {
		name, stamped string
		info          func() (*debug.BuildInfo, bool)
		want          string
	}{
		{"release stamp wins", "1.2.3", info("v9.9.9"), "1.2.3"},
		{"go install reports the module version", "dev", info("v0.4.1"), "0.4.1"},
		{"local build stays dev", "dev", info("(devel)"), "dev"},
		{"no build info", "dev", none, "dev"},
	} {
		if got := resolveVersion(tc.stamped, tc.info); got != tc.want {
			t.Errorf("%s: resolveVersion(%q) = %q, want %q", tc.name, tc.stamped, got, tc.want)
		}
	}
}
