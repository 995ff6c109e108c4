//go:build unix

package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// BenchmarkScanUnchanged10000 measures the scan of an unchanged 10,000-file
// notebook (every file trusted by the stat cache), three ways in the same
// run, interleaved iteration by iteration so the load of a shared machine
// hits all alike; each is reported as its median (ns) and relative to
// before:
//   - before: the scan as it was before ignore rules (no rule, no virtual
//     entries, no recovery-flag read);
//   - defaults: what every call does now (built-in set, recovery flag,
//     A's paths checked for virtual entries);
//   - patterns: the built-in set plus name, directory and anchored
//     patterns.
//
// The bound: defaults and patterns within 5% of before.
func BenchmarkScanUnchanged10000(b *testing.B) {
	a := benchNotebook(b, 10000)
	s, err := a.e.begin(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	defer s.End()
	if err := s.OpenL(false); err != nil {
		b.Fatal(err)
	}
	defaults, _ := workdir.NewIgnore(nil, true)
	patterns, _ := workdir.NewIgnore([]string{"*.png", "scratch/", "drafts/**/*.tmp"}, true)
	variants := []struct {
		name  string
		rules *workdir.Ignore
	}{{"before", nil}, {"defaults", defaults}, {"patterns", patterns}}
	times := make([][]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			s.Env.Ignore = v.rules
			start := time.Now()
			var files map[string]cas.ID
			var content map[string][]byte
			if v.rules == nil {
				// The scan alone, as dircall's scan runs it without rules.
				var l *workdir.Listing
				if l, err = workdir.Scan(s.Root, s.Stats, workdir.Rules{TempsOurs: true}, nil); err == nil {
					files, content = l.Files, l.Content
				}
			} else {
				var res *dircall.Scan
				if res, err = s.ScanWithRules(); err == nil {
					files, content = res.Files, res.Content
				}
			}
			times[i] = append(times[i], time.Since(start))
			if err != nil || len(files) != 10000 || len(content) != 0 {
				b.Fatalf("scan: %v, %d files, %d read", err, len(files), len(content))
			}
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2])
	}
	base := median(times[0])
	for i, v := range variants {
		m := median(times[i])
		b.ReportMetric(m, v.name+"-ns")
		if i > 0 {
			b.ReportMetric(m/base, v.name+"/before")
		}
	}
}
