package fleetsim

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A tiny fleet on the latency model: every commit is accepted, every
// accepted line is in the final notebook exactly once, the run's
// generations are at most its commits, each won write of current adds at
// least one, and every commit read current and uploaded a pack.
// Both with an engine kept per agent (serve) and with one per call (CLI).
func TestTinyFleetAuditsClean(t *testing.T) {
	for _, perCommit := range []bool{false, true} {
		t.Run(map[bool]string{false: "kept", true: "per-commit"}[perCommit], func(t *testing.T) { tinyFleet(t, perCommit) })
	}
}

func tinyFleet(t *testing.T, perCommit bool) {
	res, err := Run(context.Background(), Config{
		Agents: 10, Windows: 2, Window: 400 * time.Millisecond, Seed: 7, Dir: t.TempDir(), EnginePerCommit: perCommit,
		Model: Model{RTT: 4 * time.Millisecond, Jitter: 0.5, CondService: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 20 || res.GaveUp != 0 || !res.Audit.OK() || res.Audit.Expected != 20 || res.Audit.Found != 20 {
		t.Fatalf("accepted %d/20, gave up %d, audit %+v", res.Accepted, res.GaveUp, res.Audit)
	}
	if res.Generations < 1 || res.Generations > uint64(res.Accepted) {
		t.Fatalf("%d generations for %d accepted commits", res.Generations, res.Accepted)
	}
	c := res.Counts
	if c.WonCurrent < 1 || c.WonCurrent > int64(res.Generations) || c.CurrentGets < int64(res.Accepted) || c.Requests[KindPut] < int64(res.Accepted) {
		t.Fatalf("traffic %+v for %d commits, %d generations", c, res.Accepted, res.Generations)
	}
	if res.Latency.N != 20 || res.Latency.P50 <= 0 || res.Latency.Max < res.Latency.P99 || res.CallLatency.N != res.Calls {
		t.Fatalf("latency %+v, calls %+v of %d", res.Latency, res.CallLatency, res.Calls)
	}
}

// The audit finds a lost accepted line, a duplicated one and one nobody
// wrote, and accepts a written but unaccepted line being absent.
func TestAuditFindsLossDuplicateAndUnknown(t *testing.T) {
	tree := map[string][]byte{
		"a0000.md": []byte("# a0000\na0000-c000 one\na0000-c001 two\na0000-c001 two\n"),
		"a0001.md": []byte("# a0001\na0001-c000 x\na0009-c000 forged\n"),
	}
	accepted := []string{"a0000-c000 one", "a0000-c001 two", "a0001-c000 x", "a0001-c001 lost"}
	written := append(slices.Clone(accepted), "a0001-c002 never accepted")
	a := checkLines(tree, accepted, written)
	if a.OK() || !slices.Equal(a.Lost, []string{"a0001-c001 lost"}) || !slices.Equal(a.Duplicated, []string{"a0000-c001 two"}) ||
		!slices.Equal(a.Unknown, []string{"a0009-c000 forged"}) || a.Found != 5 {
		t.Fatalf("audit %+v", a)
	}
	if ok := checkLines(tree, accepted[:1], written); !slices.Equal(ok.Duplicated, []string{"a0000-c001 two"}) {
		t.Fatalf("a written line present twice is not reported: %+v", ok)
	}
}

// probeStore records how many conditional writes are inside the store at
// once.
type probeStore struct {
	remote.Store
	inCond, maxCond atomic.Int32
}

func raise(max *atomic.Int32, v int32) {
	for {
		old := max.Load()
		if v <= old || max.CompareAndSwap(old, v) {
			return
		}
	}
}

func (p *probeStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	raise(&p.maxCond, p.inCond.Add(1))
	defer p.inCond.Add(-1)
	time.Sleep(time.Millisecond) // widen the window a second writer would enter
	return p.Store.ReplaceIfMatch(ctx, key, data, etag)
}

// Conditional writes of one key reach the store one at a time, exactly one
// of racing writers with the same ETag wins and the others are counted
// lost, reads beside them are counted by kind. Requests are counted only
// while the model is on.
func TestLatencySerialisesConditionalWrites(t *testing.T) {
	ctx := context.Background()
	probe := &probeStore{Store: memstore.New()}
	l := NewLatency(probe, Model{RTT: 2 * time.Millisecond, Jitter: 1, CondService: time.Millisecond}, 1)
	etag, err := l.CreateIfAbsent(ctx, "current", []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Take(); c.Total() != 0 {
		t.Fatalf("counted with the model off: %+v", c)
	}
	l.Enable(true)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(2)
		go func() { defer wg.Done(); _, errs[i] = l.ReplaceIfMatch(ctx, "current", []byte{byte(i)}, etag) }()
		go func() { defer wg.Done(); _, _, _ = l.Get(ctx, "current") }()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, remote.ErrPrecondition):
			t.Fatal(err)
		}
	}
	c := l.Take()
	if won != 1 || c.Won[KindReplace] != 1 || c.Lost[KindReplace] != n-1 || c.WonCurrent != 1 || c.Requests[KindGet] != n || c.CurrentGets != n {
		t.Fatalf("won %d, counts %+v", won, c)
	}
	if probe.maxCond.Load() != 1 {
		t.Fatalf("%d conditional writes of one key inside the store at once", probe.maxCond.Load())
	}
}
