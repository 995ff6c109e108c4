package publish

import (
	"testing"
	"time"

)

// A call takes the engine's newest estimates after each read of `current`
// and each LIST (Options.Estimates): a writer whose Options hold an
// object store's defaults (200 ms, 20 ms) but whose engine has measured a
// store of a few milliseconds gathers for milliseconds, not for the
// defaults' 400 ms; an estimate of zero keeps the one before it.
func TestACallWaitsByTheNewestEstimates(t *testing.T) {
	for _, tc := range []struct {
		name      string
		estimates func() (time.Duration, time.Duration)
		want      time.Duration // the gather's wait
	}{
		{"none", nil, 400 * time.Millisecond},
		// landed (time + 2 + 1 ms) + Gather (7 x 1 + a poll of 2 ms)
		{"learned", func() (time.Duration, time.Duration) { return 2 * time.Millisecond, time.Millisecond }, 12 * time.Millisecond},
		{"zero", func() (time.Duration, time.Duration) { return 0, 0 }, 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			calls := 0
			if tc.estimates != nil {
				e.pub.opts.Estimates = func() (time.Duration, time.Duration) { calls++; return tc.estimates() }
			}
			e.commit(map[string]*string{"a": str("1\n")})
			e.clock.waits = nil
			// Right after the first write landed, the second commit's
			// LIST shows it first and alone: it gathers.
			if r := e.commit(map[string]*string{"a": str("2\n")}); r.Generation != 2 {
				t.Fatalf("generation %d", r.Generation)
			}
			if len(e.clock.waits) != 1 || e.clock.waits[0] != tc.want {
				t.Fatalf("waits %v, want one gather of %v", e.clock.waits, tc.want)
			}
			if tc.estimates != nil && calls < 2 {
				t.Fatalf("Estimates consulted %d times", calls)
			}
			if e.pub.opts.CondEstimate != 200*time.Millisecond || e.pub.opts.Gather != 180*time.Millisecond {
				t.Fatalf("a call changed the Publisher's options: %+v", e.pub.opts)
			}
		})
	}
}
