package server

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// The engine's commits teach it its store: after a version-4 commit on
// a file store with no configured estimates, P holds the summary and the
// next publication uses it (the estimates it passes to publish are the
// learned ones). Only that they were learned is checked, not their
// values, which are the machine's.
func TestStoreTimingLearnedByTheEngine(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		if name != "file" {
			continue
		}
		store := newStore(t)
		a := newAgent(t, store, func(c *Config) { c.CondEstimate, c.RTT = 0, 0 }) // learned
		if a.e.publishing.Timing == nil {
			t.Fatal("no estimator")
		}
		a.pull()
		a.write("a.md", "a\n")
		a.commit("one")
		data, err := os.ReadFile(filepath.Join(a.e.storeDir(), "timing"))
		if err != nil {
			t.Fatalf("no summary in P: %v", err)
		}
		// The summary (server/storeview) is a sealed record of three means
		// and sample counts, the conditional write's first: it was measured.
		f, ok := pstate.Unseal(data, 6)
		if !ok {
			t.Fatalf("summary %q: not a sealed record of six fields", data)
		}
		if mean, err := strconv.ParseInt(f[0], 10, 64); err != nil || f[1] == "0" || time.Duration(mean) < 50*time.Microsecond {
			t.Fatalf("summary %q: no conditional write measured", data)
		}
		opts := a.e.publishing.Opts
		if a.e.publishing.Timing.Timed(&opts, a.e.env.Store, a.e.storeDir()) == a.e.env.Store {
			t.Fatal("publish does not use the timed store")
		}
		if c, r := opts.Estimates(); opts.CondEstimate != c || opts.RTT != r {
			t.Fatalf("publish gets %v %v, learned %v %v", opts.CondEstimate, opts.RTT, c, r)
		}
		configured := newAgent(t, store)
		opts = configured.e.publishing.Opts
		if configured.e.publishing.Timing.Timed(&opts, configured.e.env.Store, configured.e.storeDir()) != configured.e.env.Store || opts.CondEstimate != 2*time.Millisecond {
			t.Fatal("configured estimates were replaced")
		}
	}
}
