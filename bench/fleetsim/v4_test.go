package fleetsim

import (
	"context"
	"testing"
	"time"
)

// The publish mode on a small fleet: every commit is accepted through
// package publish, every accepted line is in the final notebook exactly
// once, and every agent was told a generation of its own that names its
// ID. A burst makes the agents register together, so folds take groups
// (group packs, re-parented members), and 20 agents put most of them more
// than the tail's 15 generations behind, so catch-up reads segments.
// Random arrival is the other case: mostly commits folded alone. Lazy
// catch-up must find what the build and the fold read as they miss it.
func TestPublishFleetAuditsClean(t *testing.T) {
	for _, c := range []struct {
		name    string
		burst   bool
		catchUp string
		window  time.Duration
	}{{"burst", true, CatchUpFull, 400 * time.Millisecond}, {"random", false, CatchUpFull, 400 * time.Millisecond},
		{"random-lazy", false, CatchUpLazy, 60 * time.Millisecond}} {
		burst := c.burst
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), Config{
				Engine: EnginePublish, CatchUp: c.catchUp, Agents: 20, Windows: 2, Window: c.window, Burst: burst, Seed: 3,
				Model: Model{RTT: 4 * time.Millisecond, Jitter: 0.5, CondService: time.Millisecond},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Accepted != 40 || res.GaveUp != 0 || res.Busy != 0 {
				t.Fatalf("accepted %d/40, gave up %d, busy %d: %v", res.Accepted, res.GaveUp, res.Busy, res.OtherCause)
			}
			if !res.Audit.OK() || res.Audit.Expected != 40 || res.Audit.Found != 40 {
				t.Fatalf("line audit %+v", res.Audit)
			}
			// Disjoint files never conflict: a second version means the
			// fold could not read an object it needed and declined.
			if res.Versions != 40 {
				t.Fatalf("%d versions built for 40 commits", res.Versions)
			}
			if !res.GenAudit.OK() || res.GenAudit.Distinct != 40 || res.Generations != 40 {
				t.Fatalf("generation audit %+v, %d generations", res.GenAudit, res.Generations)
			}
			if res.Counts.WonCurrent == 0 || res.CatchUp.Requests[KindGet] == 0 || res.CatchUp.Total() > res.Counts.Total() {
				t.Fatalf("won writes %d, catch-up %d of %d requests", res.Counts.WonCurrent, res.CatchUp.Total(), res.Counts.Total())
			}
		})
	}
}
