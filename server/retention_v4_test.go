package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// retainV4Agent is a version-4 writer with a small window (K = M = 4) and
// a checkpoint every 8 generations, so 40 commits make four checkpoints
// and the history floor (the oldest listed one) moves past the window.
func retainV4Agent(t *testing.T, store remote.Store, opts ...agentOpt) *agent {
	t.Helper()
	a := newAgent(t, store, append([]agentOpt{withCheckpoints(8, 1)}, opts...)...)
	a.setWindow(4, 4)
	return a
}

// newest is the increment of `current`'s newest generation, as a reader
// lists it (tests record each one as it is accepted: a sweep may delete
// the segments that list it later).
func newest(t *testing.T, store remote.Store) remote.Increment {
	t.Helper()
	m := currentV4(t, store)
	return remote.IncrementOfV4(m.Increments[len(m.Increments)-1])
}

func present(t *testing.T, store remote.Store, key string) bool {
	t.Helper()
	_, err := store.Head(context.Background(), key)
	if err != nil && !errors.Is(err, remote.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// History retention on a version-4 store: after enough commits for
// several checkpoints, the sweep deletes what lies below the oldest
// checkpoint `current` lists (accepted proposals, group packs, segments,
// checkpoints no longer listed, registrations no fold takes), every
// generation above it still reads (log, show, file at), verify is clean,
// a fresh directory pulls, and a generation below it is
// HISTORY_UNAVAILABLE naming the oldest retained generation.
func TestV4RetentionDeletesBelowTheFloor(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store := newStore(t)
			a := retainV4Agent(t, store, func(c *Config) { c.Retain = NoRetainWindow })
			a.pull()
			var incs []remote.Increment
			for g := 1; g <= 40; g++ {
				a.write(fmt.Sprintf("f%d.md", g%5), fmt.Sprintf("generation %d\n", g))
				if res := a.commit(fmt.Sprintf("c%d", g)); res.Generation != uint64(g) {
					t.Fatalf("commit %d: generation %d", g, res.Generation)
				}
				incs = append(incs, newest(t, store))
				a.e.publishing.Background.Wait() // rollups, checkpoints, sweeps: none left to timing
			}
			m := currentV4(t, store)
			floor := remote.HistoryFloorV4(m, a.e.publishing.Background.Window())
			if len(m.Checkpoints) == 0 || floor != m.Checkpoints[len(m.Checkpoints)-1].Through || floor < 16 {
				t.Fatalf("checkpoints %+v %+v: floor %d", m.Checkpoint, m.Checkpoints, floor)
			}
			a.e.publishing.Background.Sweep(ctx) // the last due sweep may predate the newest checkpoint

			// Below the floor: gone; above it: kept.
			above := map[string]bool{}
			for _, inc := range incs[floor:] {
				above[inc.Pack.Key], above[inc.Group.Key] = true, true
			}
			for _, inc := range incs {
				for _, key := range []string{inc.Pack.Key, inc.Group.Key} {
					if key == "" {
						continue
					}
					want := inc.Generation > floor || above[key]
					if got := present(t, store, key); got != want {
						t.Errorf("generation %d (floor %d): %s present %v, want %v", inc.Generation, floor, key, got, want)
					}
				}
			}
			segs, _ := store.List(ctx, remote.SegmentsPrefix)
			for _, o := range segs {
				if _, _, last, _, err := remote.ParseSegmentKey(o.Key); err == nil && last <= floor {
					t.Errorf("segment %s lies below the floor %d", o.Key, floor)
				}
			}
			listed := map[string]bool{m.Checkpoint.Pack.Key: true}
			for _, cp := range m.Checkpoints {
				listed[cp.Pack.Key] = true
			}
			cps, _ := store.List(ctx, remote.CheckpointsPrefix)
			for _, o := range cps {
				// One through a generation above the active checkpoint is
				// registered, waiting for a fold to copy it.
				if _, through, _, err := remote.ParsePackKey(o.Key); err == nil && !listed[o.Key] && through <= m.Checkpoint.Through {
					t.Errorf("checkpoint %s is listed by no `current` and still stored", o.Key)
				}
			}
			for key := range listed {
				if !present(t, store, key) {
					t.Errorf("listed checkpoint %s is gone", key)
				}
			}
			props, _ := store.List(ctx, remote.ProposalsPrefix)
			for _, o := range props {
				kind, g, _, _, _ := remote.ParseProposalEntry(o.Key)
				if (kind == remote.EntryRollup || kind == remote.EntryCheckpoint) && g <= m.Checkpoint.Through {
					t.Errorf("registration %s at or below the active checkpoint %d", o.Key, m.Checkpoint.Through)
				}
			}

			rep, err := remote.Verify(ctx, store, remote.VerifyOptions{})
			if err != nil || !rep.OK() {
				t.Fatalf("verify: %+v %v", rep, err)
			}
			if rep.History.Floor != floor || rep.History.Oldest != floor+1 {
				t.Fatalf("verify's retention %+v, floor %d", rep.History, floor)
			}

			fresh := retainV4Agent(t, store)
			fresh.pull()
			equalMaps(t, "fresh directory", fresh.files(), a.files())
			log, err := fresh.e.History(ctx, history.Query{Limit: 100})
			if err != nil || len(log) != int(40-floor) || log[len(log)-1].Generation != floor+1 {
				t.Fatalf("log: %d entries, %v; floor %d", len(log), err, floor)
			}
			for g := floor + 1; g <= 40; g++ {
				e, err := fresh.e.Show(ctx, g, "")
				if err != nil || e.Message != fmt.Sprintf("c%d", g) {
					t.Fatalf("show %d: %+v %v", g, e, err)
				}
				want := fmt.Sprintf("generation %d\n", g)
				if got, err := fresh.e.FileAt(ctx, g, fmt.Sprintf("f%d.md", g%5)); err != nil || string(got) != want {
					t.Fatalf("file at %d: %q %v", g, got, err)
				}
			}
			if _, err := fresh.e.FileAt(ctx, floor, "f0.md"); err != nil {
				t.Fatalf("the floor's tree: %v", err)
			}
			if ch, err := fresh.e.Diff(ctx, floor, history.Latest, ""); err != nil || len(ch) != 5 {
				t.Fatalf("diff from the floor to the head: %d changes, %v", len(ch), err)
			}
			if _, err := fresh.e.Diff(ctx, floor-1, history.Latest, ""); err == nil {
				t.Fatal("a diff from below the floor answered")
			}
			if bl, err := fresh.e.Blame(ctx, history.BlameQuery{Path: "f3.md"}); err != nil || len(bl.Lines) != 1 || bl.Lines[0].Generation != 38 {
				t.Fatalf("blame: %+v %v", bl, err)
			}
			for _, g := range []uint64{1, floor - 1, floor} {
				_, err := fresh.e.Show(ctx, g, "")
				msg := fmt.Sprintf("the oldest retained generation is %d.", floor+1)
				if de := domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonHistoryUnavailable); !strings.Contains(de.Message, msg) {
					t.Fatalf("show %d: %q does not say %q", g, de.Message, msg)
				}
				if g == floor {
					continue
				}
				_, err = fresh.e.FileAt(ctx, g, "f1.md")
				msg = fmt.Sprintf("the oldest retained generation is %d.", floor)
				if de := domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonHistoryUnavailable); !strings.Contains(de.Message, msg) {
					t.Fatalf("file at %d: %q does not say %q", g, de.Message, msg)
				}
			}
			// Writing on after the sweep works (the commit makes the
			// checkpoint through 40 the active one), and the next sweep
			// deletes the accepted proposals below its own floor only.
			fresh.write("more.md", "more\n")
			if res := fresh.commit("more"); res.Generation != 41 {
				t.Fatalf("commit after the sweep: %+v", res)
			}
			fresh.e.publishing.Background.Wait()
			floor2 := remote.HistoryFloorV4(currentV4(t, store), 8)
			res, err := fresh.e.env.Notebook.CleanupV4(ctx, remote.CleanupV4Options{Window: 8})
			if err != nil || floor2 <= floor {
				t.Fatalf("second sweep: floor %d, then %d: %v", floor, floor2, err)
			}
			for _, inc := range incs {
				if deleted := slices.Contains(res.Deleted, inc.Pack.Key); deleted != (inc.Generation > floor && inc.Generation <= floor2) {
					t.Errorf("second sweep (floor %d, then %d): generation %d deleted %v", floor, floor2, inc.Generation, deleted)
				}
			}
			if rep, err := remote.Verify(ctx, store, remote.VerifyOptions{}); err != nil || !rep.OK() || rep.History.Floor != floor2 {
				t.Fatalf("verify after the second sweep: %+v %v", rep, err)
			}
		})
	}
}

// staleStore answers the first read of `current` after it is armed with
// the bytes it was given: a reader that read `current` before a sweep
// and goes on after it.
type staleStore struct {
	remote.Store
	mu    sync.Mutex
	stale []byte
}

func (s *staleStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	s.mu.Lock()
	stale := s.stale
	if key == remote.CurrentKey {
		s.stale = nil
	}
	s.mu.Unlock()
	if key == remote.CurrentKey && stale != nil {
		return stale, "stale", nil
	}
	return s.Store.Get(ctx, key)
}

// A reader that read `current` before a sweep, whose active checkpoint
// and history the sweep then deleted, catches up all the same: the
// missing pack sends the pull back to `current`, which no longer needs
// it (the promise of version 3's cleanup, server/pull).
func TestV4RetentionReaderThatReadCurrentBeforeTheSweep(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		for _, op := range []string{"pull", "commit"} {
			t.Run(name+"/"+op, func(t *testing.T) { testV4RetentionStaleReader(t, newStore(t), op) })
		}
	}
}

func testV4RetentionStaleReader(t *testing.T, store remote.Store, op string) {
	ctx := context.Background()
	a := retainV4Agent(t, store, func(c *Config) { c.Retain = NoRetainWindow })
	a.pull()
	reader := &staleStore{Store: store}
	b := retainV4Agent(t, reader)
	b.pull()
	var old []byte
	for g := 1; g <= 40; g++ {
		a.write(fmt.Sprintf("f%d.md", g%5), fmt.Sprintf("generation %d\n", g))
		a.commit(fmt.Sprintf("c%d", g))
		a.e.publishing.Background.Wait()
		if g == 12 {
			old, _, _ = store.Get(ctx, remote.CurrentKey)
		}
	}
	a.e.publishing.Background.Sweep(ctx)
	oldM, _, err := remote.DecodeCurrent(old)
	if err != nil || oldM.Checkpoint.IsGenesis() || present(t, store, oldM.Checkpoint.Pack.Key) {
		t.Fatalf("the old `current`'s checkpoint %+v survived the sweep (%v)", oldM.Checkpoint, err)
	}
	reader.mu.Lock()
	reader.stale = old
	reader.mu.Unlock()
	if op == "pull" {
		if res := b.pull(); res.Generation != 40 {
			t.Fatalf("the reader's pull: %+v", res)
		}
		equalMaps(t, "reader", b.files(), a.files())
		return
	}
	b.write("b.md", "b\n")
	if res := b.commit("b"); res.Generation != 41 {
		t.Fatalf("the reader's commit: %+v", res)
	}
	want := a.files()
	want["b.md"] = "b\n"
	equalMaps(t, "reader", b.files(), want)
}

// --retain keeps what is younger than the window: while a generation at
// or below the floor was accepted less than --retain ago, the sweep
// deletes no history and every generation reads from the first; once
// the clock passes the window, the next sweep deletes below the floor.
func TestV4RetentionKeepsTheWindow(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		t.Run(name, func(t *testing.T) { testV4RetentionKeepsTheWindow(t, newStore(t)) })
	}
}

func testV4RetentionKeepsTheWindow(t *testing.T, store remote.Store) {
	ctx := context.Background()
	var ahead atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	a := retainV4Agent(t, store, func(c *Config) { c.Retain, c.Now = time.Hour, clock })
	a.pull()
	var incs []remote.Increment
	for g := 1; g <= 40; g++ {
		a.write("n.md", fmt.Sprintf("generation %d\n", g))
		a.commit(fmt.Sprintf("c%d", g))
		incs = append(incs, newest(t, store))
		a.e.publishing.Background.Wait()
	}
	a.e.publishing.Background.Sweep(ctx)
	for _, inc := range incs {
		if !present(t, store, inc.Pack.Key) {
			t.Fatalf("generation %d, inside the window, lost its proposal", inc.Generation)
		}
	}
	fresh := retainV4Agent(t, store)
	if got, err := fresh.e.FileAt(ctx, 1, "n.md"); err != nil || string(got) != "generation 1\n" {
		t.Fatalf("generation 1 inside the window: %q %v", got, err)
	}
	if rep, err := remote.Verify(ctx, store, remote.VerifyOptions{}); err != nil || !rep.OK() || rep.History.Floor != 0 {
		t.Fatalf("verify inside the window: %+v %v", rep, err)
	}

	ahead.Store(int64(2 * time.Hour))
	a.e.publishing.Background.Sweep(ctx)
	floor := remote.HistoryFloorV4(currentV4(t, store), a.e.publishing.Background.Window())
	if floor < 16 || present(t, store, incs[0].Pack.Key) || !present(t, store, incs[floor].Pack.Key) {
		t.Fatalf("past the window: floor %d, generation 1 kept %v", floor, present(t, store, incs[0].Pack.Key))
	}
	if _, err := fresh.e.FileAt(ctx, 1, "n.md"); err == nil {
		t.Fatal("generation 1 reads after the sweep")
	}
	if got, err := fresh.e.FileAt(ctx, floor+1, "n.md"); err != nil || string(got) != fmt.Sprintf("generation %d\n", floor+1) {
		t.Fatalf("generation %d: %q %v", floor+1, got, err)
	}
	if rep, err := remote.Verify(ctx, store, remote.VerifyOptions{}); err != nil || !rep.OK() || rep.History.Floor != floor {
		t.Fatalf("verify past the window: %+v %v", rep, err)
	}
}
