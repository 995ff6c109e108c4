package remote_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// mutexTurns is a Turnstile over one mutex, counting turns and checking
// that no two are held at once.
type mutexTurns struct {
	mu            sync.Mutex
	taken, inside atomic.Int64
	overlap       atomic.Bool
}

func (m *mutexTurns) Take(ctx context.Context, _ func() bool) (func(), bool) {
	m.mu.Lock()
	m.taken.Add(1)
	if m.inside.Add(1) != 1 {
		m.overlap.Store(true)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			m.inside.Add(-1)
			m.mu.Unlock()
		})
	}, true
}

// Writers that share a turnstile never lose a race to one another: each
// attempt holds its turn from the read of `current` to its conditional
// write, so with a store slow enough that every attempt overlaps the
// others, all commits are accepted on their first attempt. The same
// writers without turns lose races (the control, so the first half cannot
// pass by accident).
func TestPublishTurnsKeepWritersFromRacing(t *testing.T) {
	const writers, commits = 6, 4
	run := func(turns remote.Turnstile) (retries int) {
		ctx := context.Background()
		m := memstore.New()
		for range 4 * writers * commits {
			m.Inject(memstore.Fault{Op: memstore.OpPut, KeyPrefix: "packs/", Delay: 2 * time.Millisecond})
		}
		var total atomic.Int64
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				nb := remote.Open(m, remote.Options{Turns: turns, Sleep: (&noSleep{}).Sleep, Retries: 100})
				var p proposer
				for range commits {
					acc, err := nb.Publish(ctx, p.build)
					if err != nil {
						t.Error(err)
						return
					}
					total.Add(int64(acc.Attempts - 1))
				}
			})
		}
		wg.Wait()
		st, err := remote.Open(m, remote.Options{}).ReadCurrent(ctx)
		if err != nil || st.Generation() != writers*commits {
			t.Fatalf("generation %d (%v), want %d", st.Generation(), err, writers*commits)
		}
		return int(total.Load())
	}
	turns := &mutexTurns{}
	if r := run(turns); r != 0 {
		t.Errorf("with turns: %d retries, want 0", r)
	}
	if turns.overlap.Load() || turns.taken.Load() != writers*commits {
		t.Errorf("turns: %d taken (want %d, one per attempt), overlapping: %v", turns.taken.Load(), writers*commits, turns.overlap.Load())
	}
	if r := run(nil); r == 0 {
		t.Errorf("without turns: no retries; the store is not slow enough for this test to show anything")
	}
}

// A writer gives up its turn while it backs off after a race lost to a
// writer outside the turnstile, and takes a new one for its retry.
func TestPublishGivesUpItsTurnWhileBackingOff(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	turns := &mutexTurns{}
	var heldWhileAsleep bool
	sleep := func(ctx context.Context, d time.Duration) error {
		heldWhileAsleep = heldWhileAsleep || turns.inside.Load() != 0
		return nil
	}
	nb := remote.Open(m, remote.Options{Turns: turns, Sleep: sleep, Retries: 3})
	calls := 0
	rival := rivalBuild(t, m, &calls) // publishes another writer's commit before each of our builds
	first := true
	build := func(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
		if first {
			first = false
			return rival(ctx, observed, pub)
		}
		var p proposer
		return p.build(ctx, observed, pub)
	}
	acc, err := nb.Publish(ctx, build)
	if err != nil || acc.Attempts != 2 {
		t.Fatalf("Publish = %+v, %v; want accepted on the second attempt", acc, err)
	}
	if heldWhileAsleep {
		t.Error("the turn was held during the backoff")
	}
	if turns.taken.Load() != 2 || turns.inside.Load() != 0 {
		t.Errorf("%d turns taken, %d held at the end; want 2 and 0", turns.taken.Load(), turns.inside.Load())
	}
}

// mapNearby is a Nearby in memory.
type mapNearby struct {
	mu            sync.Mutex
	packs         map[string][]byte
	current, etag string
	reliable      bool
}

func (m *mapNearby) Current() ([]byte, string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etag == "" {
		return nil, "", false
	}
	return []byte(m.current), m.etag, m.reliable
}

func (m *mapNearby) KeepCurrent(data []byte, etag string, reliable bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.current, m.etag, m.reliable = string(data), etag, reliable
}

func (m *mapNearby) Pack(key string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.packs[key]
}

func (m *mapNearby) KeepPack(key string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.packs == nil {
		m.packs = map[string][]byte{}
	}
	m.packs[key] = append([]byte(nil), data...)
}

// A writer catches up on its neighbours' increments from Nearby, without
// a store read, when it holds all of them; one that does not match what
// the manifest says (damaged, or another pack under that name) sends the
// catch-up from it on to the store, which returns the right bytes.
func TestCatchUpFromNearby(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	near := &mapNearby{}
	nb := remote.Open(m, remote.Options{Nearby: near})
	var p proposer
	for range 5 {
		if _, err := nb.Publish(ctx, p.build); err != nil {
			t.Fatal(err)
		}
	}
	st, err := nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	catchUp := func() (remote.CatchUpStats, map[string][]byte, int) {
		gets := m.Calls(memstore.OpGet)
		got := map[string][]byte{}
		stats, err := nb.CatchUp(ctx, st, 1, 2, nil, func(packs []remote.CaughtUpPack) error {
			for _, pk := range packs {
				got[pk.Key] = pk.Data
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return stats, got, m.Calls(memstore.OpGet) - gets
	}
	stats, got, gets := catchUp()
	if stats.Nearby != 4 || gets != 0 || len(got) != 4 {
		t.Fatalf("catch-up of generations 2..5: %+v, %d store GETs, %d packs; want 4 from Nearby and no GET", stats, gets, len(got))
	}
	incs, err := nb.Publications(ctx, st, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	near.KeepPack(incs[1].Pack.Key, []byte("not the pack"))
	stats, got, gets = catchUp()
	// Generation 2 still comes from Nearby, in order; from the damaged
	// one on, the store serves.
	if stats.Nearby != 1 || gets == 0 || len(got) < 2 {
		t.Fatalf("with a damaged nearby pack: %+v, %d store GETs; want generation 2 nearby, the rest from the store", stats, gets)
	}
	for key, data := range got {
		if string(data) == "not the pack" {
			t.Fatalf("%s: the damaged bytes were kept", key)
		}
	}
}

// The nearby catch-up reads no history from the store: segments another
// machine wrote (neither read by this process nor kept nearby) end the
// history it goes through, with no request; once held (read before, or
// kept nearby) they serve it. (Read from the store, a fleet of machines
// paid four GETs per commit for history whose increments were not nearby
// anyway.)
func TestNearbyHistoryIsLocal(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	other := remote.Open(m, remote.Options{}) // another machine
	var p proposer
	for range 40 {
		if _, err := other.Publish(ctx, p.build); err != nil {
			t.Fatal(err)
		}
	}
	near := &mapNearby{}
	reader := remote.Open(m, remote.Options{Nearby: near})
	st, err := reader.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Manifest.Segments) == 0 || st.Manifest.Increments[0].Generation <= 2 {
		t.Fatalf("40 publications left no history in segments: the test needs some")
	}
	tail := st.Manifest.Increments[0].Generation
	gets := m.Calls(memstore.OpGet)
	if incs := reader.LocalPublications(ctx, st, 2, 40); len(incs) != 0 || m.Calls(memstore.OpGet) != gets {
		t.Fatalf("history held elsewhere: %d publications, %d GETs; want none and none", len(incs), m.Calls(memstore.OpGet)-gets)
	}
	if incs := reader.LocalPublications(ctx, st, tail, 40); len(incs) != int(41-tail) || m.Calls(memstore.OpGet) != gets {
		t.Fatalf("the tail: %d publications, %d GETs; want %d and none", len(incs), m.Calls(memstore.OpGet)-gets, 41-tail)
	}
	// Kept nearby (as a holder keeps the segments its folds made): read
	// from there, checked, without a request.
	for _, ref := range st.Manifest.Segments {
		data, _, err := m.Get(ctx, ref.Key())
		if err != nil {
			t.Fatal(err)
		}
		near.KeepPack(ref.Key(), data)
	}
	fresh := remote.Open(m, remote.Options{Nearby: near})
	want, err := other.Publications(ctx, st, 2, 40)
	if err != nil {
		t.Fatal(err)
	}
	before := m.Calls(memstore.OpGet)
	incs := fresh.LocalPublications(ctx, st, 2, 40)
	if len(incs) != len(want) || len(incs) != 39 || incs[0] != want[0] || incs[38] != want[38] || m.Calls(memstore.OpGet) != before {
		t.Fatalf("history kept nearby: %d publications (want %d), %d GETs; want none", len(incs), len(want), m.Calls(memstore.OpGet)-before)
	}
}

// PublishNearby builds on the state the writer before it in the
// turnstile published, without reading `current`; when another writer
// (outside the turnstile) published since, the guess fails its
// conditional write and the call goes on from a read, not counted as a
// retry. Publish never guesses.
func TestPublishNearbyBuildsOnTheLastHoldersState(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	turns, near := &mutexTurns{}, &mapNearby{}
	a := remote.Open(m, remote.Options{Turns: turns, Nearby: near})
	b := remote.Open(m, remote.Options{Turns: turns, Nearby: near})
	var pa, pb, pc proposer
	if _, err := a.Publish(ctx, pa.build); err != nil {
		t.Fatal(err)
	}
	// The first state kept is not yet guessed on: nobody found it right.
	gets := m.Calls(memstore.OpGet)
	if _, err := b.PublishNearby(ctx, pb.build, nil); err != nil {
		t.Fatal(err)
	}
	if m.Calls(memstore.OpGet) == gets {
		t.Fatal("PublishNearby guessed on a state no writer had found right")
	}
	gets = m.Calls(memstore.OpGet)
	acc, err := b.PublishNearby(ctx, pb.build, nil)
	if err != nil || acc.Attempts != 1 || acc.State.Generation() != 3 {
		t.Fatalf("PublishNearby = %+v, %v; want generation 3 on the first attempt", acc, err)
	}
	if n := m.Calls(memstore.OpGet) - gets; n != 0 {
		t.Fatalf("PublishNearby read %d objects; want none (it builds on a's state)", n)
	}

	// Another writer, outside the turnstile, moves `current` on.
	if _, err := remote.Open(m, remote.Options{}).Publish(ctx, pc.build); err != nil {
		t.Fatal(err)
	}
	acc, err = a.PublishNearby(ctx, pa.build, nil)
	if err != nil || acc.Attempts != 1 || acc.State.Generation() != 5 {
		t.Fatalf("PublishNearby on a stale state = %+v, %v; want generation 5, the wrong guess not counted", acc, err)
	}
	if got := pa.observed[len(pa.observed)-1].Generation(); got != 4 {
		t.Fatalf("the attempt after the wrong guess built on generation %d, want 4 (read)", got)
	}
	// That guess was wrong: the next writer reads instead of guessing.
	gets = m.Calls(memstore.OpGet)
	if _, err := b.PublishNearby(ctx, pb.build, nil); err != nil {
		t.Fatal(err)
	}
	if m.Calls(memstore.OpGet) == gets {
		t.Fatal("PublishNearby guessed right after a wrong guess")
	}

	gets = m.Calls(memstore.OpGet)
	if _, err := b.Publish(ctx, pb.build); err != nil {
		t.Fatal(err)
	}
	if m.Calls(memstore.OpGet) == gets {
		t.Fatal("Publish built on the nearby state without reading `current`")
	}
}
