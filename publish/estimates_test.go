package publish

import (
	"context"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A call takes the engine's newest estimates after each read of `current`
// and each LIST (Options.Estimates): a writer whose Options hold an
// object store's defaults (200 ms, 20 ms) but whose engine has measured a
// store of a few milliseconds gathers for milliseconds, not for the
// defaults' 360 ms; an estimate of zero keeps the one before it.
func TestACallWaitsByTheNewestEstimates(t *testing.T) {
	for _, tc := range []struct {
		name      string
		estimates func() (time.Duration, time.Duration)
		want      time.Duration // the gather's wait
	}{
		{"none", nil, 360 * time.Millisecond},
		// landed (time + 2 + 1 ms) + Gather (5 x 1 + a poll of 2 ms)
		{"learned", func() (time.Duration, time.Duration) { return 2 * time.Millisecond, time.Millisecond }, 10 * time.Millisecond},
		{"zero", func() (time.Duration, time.Duration) { return 0, 0 }, 360 * time.Millisecond},
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
			if e.pub.opts.CondEstimate != 200*time.Millisecond || e.pub.opts.Gather != 140*time.Millisecond {
				t.Fatalf("a call changed the Publisher's options: %+v", e.pub.opts)
			}
		})
	}
}

// interloper lets another writer's write land just before the first
// conditional write of `current` it forwards, once: that write loses.
type interloper struct {
	remote.Store
	before func()
}

func (s *interloper) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if f := s.before; f != nil {
		s.before = nil
		f()
	}
	return s.Store.ReplaceIfMatch(ctx, key, data, etag)
}

// A folder whose write lost has gathered for this fold already: it LISTs
// and folds at once. Gathering again after each loss, a folder lost to
// every commit of a writer folding alone without a LIST (the skip rule)
// on a fast store, until that writer's streak ran out.
func TestAFolderWhoseWriteLostDoesNotGatherAgain(t *testing.T) {
	il := &interloper{}
	e := newEnv(t, func(m *memstore.Mem) remote.Store { il.Store = m; return il })
	e.commit(map[string]*string{"a": str("1\n")})
	other, err := New(e.mem, Options{Store: storeID, Clock: e.clock, Objects: allPacks(e.mem), Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	waits := -1
	il.before = func() {
		// A writer whose previous commit was generation 1, accepted
		// alone: it skips the LIST and writes generation 2.
		id := e.id()
		r, err := other.CommitAfter(context.Background(), id, Streak{Generation: 1}, change(allPacks(e.mem), id, map[string]*string{"b": str("b\n")}))
		if err != nil || r.Generation != 2 {
			t.Errorf("the other writer: generation %d, %v", r.Generation, err)
		}
		waits = len(e.clock.waits)
	}
	e.clock.waits = nil
	r := e.commit(map[string]*string{"a": str("2\n")})
	if r.Generation != 3 || waits < 0 {
		t.Fatalf("generation %d (the other write landed: %v)", r.Generation, waits >= 0)
	}
	if waits != 1 || len(e.clock.waits) != 1 {
		t.Fatalf("waits %v, the other write after %d of them: want the first gather only", e.clock.waits, waits)
	}
}
