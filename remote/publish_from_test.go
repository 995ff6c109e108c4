package remote_test

import (
	"context"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// From a state still current, a publication is two requests: no read.
// From a state another writer has replaced, the replace fails its
// condition and the call goes on from a fresh read, with no backoff, and
// builds on what it read.
func TestPublishFromKnownState(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	var clock noSleep
	nb := remote.Open(m, remote.Options{Sleep: clock.Sleep})
	var p proposer
	first, err := nb.Publish(ctx, p.build)
	if err != nil {
		t.Fatal(err)
	}
	calls := func() (get, write int) {
		return m.Calls(memstore.OpGet) + m.Calls(memstore.OpHead), m.Calls(memstore.OpPut) + m.Calls(memstore.OpReplace) + m.Calls(memstore.OpCreate)
	}
	g0, w0 := calls()
	acc, err := nb.PublishFrom(ctx, first.State, p.build, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := calls(); g != g0 || w != w0+2 || acc.State.Generation() != 2 || acc.Attempts != 1 {
		t.Fatalf("from the current state: %d reads, %d writes, %+v; want 0 reads, 2 writes, generation 2", g-g0, w-w0, acc)
	}

	// Another writer publishes: the state acc knows is outdated.
	other := remote.Open(m, remote.Options{})
	if _, err := other.Publish(ctx, p.build); err != nil {
		t.Fatal(err)
	}
	p.observed = nil
	got, err := nb.PublishFrom(ctx, acc.State, p.build, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.State.Generation() != 4 || len(p.observed) != 2 || p.observed[1].Generation() != 3 {
		t.Fatalf("from an outdated state: %+v, builds observed %d states", got, len(p.observed))
	}
	if len(clock.waits) != 0 {
		t.Fatalf("backed off %v after an outdated known state", clock.waits)
	}

	// Nothing to publish on the known state: decided on a fresh read.
	g0, _ = calls()
	if got, err := nb.PublishFrom(ctx, got.State, func(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
		return remote.Proposal{Skip: true}, nil
	}, nil); err != nil || got.Published {
		t.Fatalf("skip: %+v %v", got, err)
	}
	if g, _ := calls(); g != g0+1 {
		t.Fatalf("a skip on a known state read current %d times, want once", g-g0)
	}
}
