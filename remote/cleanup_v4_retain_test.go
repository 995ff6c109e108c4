package remote_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

func retainID(n int) string { return fmt.Sprintf("0190a000-%04x-7abc-8def-%012x", n&0xffff, n) }

func retainCheckpoint(through uint64) remote.Checkpoint {
	pub := retainID(70000 + int(through))
	return remote.Checkpoint{Pack: remote.PackRef{Key: remote.CheckpointKey(through, pub), Sum: cas.Sum([]byte{byte(through)}), Size: 10},
		Head: cas.Sum([]byte(fmt.Sprint("head ", through))), Through: through, Publication: pub}
}

// The sweep of a version-4 store whose `current` lists checkpoints
// through 40 (active) and 24 (retained), at generation 60 with a window
// of 8 (docs/storage.md §5.1 R1, R2): the accepted proposals of
// generations 1..24 go, the proposal of generation 1 first, and so do the
// segments that end at or below 24, the checkpoint no `current` lists,
// and the rollup registered at or below the active checkpoint with its
// pack; everything above stays, and readers see the sign (SweptV4).
func TestCleanupV4DeletesBelowTheFloor(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	var m *remote.ManifestV4
	var incs []remote.IncrementV4
	// Generations 21..22 and 24..25 are each accepted by one write with a
	// group pack: the first lies below the floor, the second straddles it.
	below, across := []byte("group pack of 21, 22"), []byte("group pack of 24, 25")
	for g := 1; g <= 60; {
		var parent uint64
		if m != nil {
			parent = m.Generation
		}
		var mbs []remote.MemberV4
		var group remote.GroupRef
		k := 1
		switch g {
		case 21:
			k, group = 2, remote.GroupRef{Sum: cas.Sum(below), Size: int64(len(below))}
		case 24:
			k, group = 2, remote.GroupRef{Sum: cas.Sum(across), Size: int64(len(across))}
		}
		for i := g; i < g+k; i++ {
			mbs = append(mbs, remote.MemberV4{Publication: retainID(i), Proposal: parent, Head: cas.Sum([]byte(fmt.Sprint("head ", i))), Time: uint64(1000 + i)})
		}
		next, ups, err := remote.NextV4(m, "0123456789abcdef0123456789abcdef", uint64(1000+g), mbs, group, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			if err := store.Put(ctx, u.Key, u.Data); err != nil {
				t.Fatal(err)
			}
		}
		m = next
		for _, inc := range m.Increments[len(m.Increments)-k:] {
			incs = append(incs, inc)
			if err := store.Put(ctx, inc.ProposalKey(), []byte("proposal")); err != nil {
				t.Fatal(err)
			}
		}
		g += k
	}
	// The group packs hold no commit: the sweep's rule for lost writes
	// keeps such a pack, so only the history rule decides them.
	for _, data := range [][]byte{below, across} {
		if err := store.Put(ctx, remote.GroupPackKeyV4(cas.Sum(data)), data); err != nil {
			t.Fatal(err)
		}
	}
	m.Checkpoint, m.Checkpoints = retainCheckpoint(40), []remote.Checkpoint{retainCheckpoint(24)}
	for _, through := range []uint64{8, 24, 40, 48} {
		if err := store.Put(ctx, retainCheckpoint(through).Pack.Key, []byte("checkpoint")); err != nil {
			t.Fatal(err)
		}
	}
	regKey := func(first uint64) (string, string) {
		r := remote.RollupRef{Level: 2, First: first, Sum: cas.Sum([]byte{byte(first)}), Size: 8}
		key, desc, err := remote.EncodeRegistered(remote.Registered{Kind: remote.EntryRollup, Rollup: r})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, key, desc); err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, r.Key(), []byte("rollup")); err != nil {
			t.Fatal(err)
		}
		return key, r.Key()
	}
	oldReg, oldPack := regKey(33) // block 33..36: at or below the active checkpoint
	newReg, newPack := regKey(41) // block 41..44: a fold may still copy it
	data, err := remote.EncodeManifestV4(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateIfAbsent(ctx, remote.CurrentKey, data); err != nil {
		t.Fatal(err)
	}
	n := remote.Open(store, remote.Options{})
	state, err := n.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if swept, err := n.SweptV4(ctx, state); err != nil || swept {
		t.Fatalf("before the sweep: swept %v, %v", swept, err)
	}
	if f := remote.HistoryFloorV4(m, 8); f != 24 {
		t.Fatalf("floor %d", f)
	}

	res, err := n.CleanupV4(ctx, remote.CleanupV4Options{Window: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) == 0 || res.Deleted[0] != incs[0].ProposalKey() {
		t.Fatalf("the sweep did not delete generation 1's proposal first: %v", res.Deleted)
	}
	has := func(key string) bool {
		_, err := store.Head(ctx, key)
		if err != nil && !errors.Is(err, remote.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	for _, inc := range incs {
		if has(inc.ProposalKey()) != (inc.Generation > 24) {
			t.Errorf("generation %d: proposal present %v", inc.Generation, !(inc.Generation > 24))
		}
	}
	segs, err := store.List(ctx, remote.SegmentsPrefix)
	if err != nil || len(segs) == 0 {
		t.Fatalf("segments %v %v", segs, err)
	}
	for _, o := range segs {
		if _, _, last, _, err := remote.ParseSegmentKey(o.Key); err != nil || last <= 24 {
			t.Errorf("segment %s kept (%v)", o.Key, err)
		}
	}
	if has(remote.GroupPackKeyV4(cas.Sum(below))) || !has(remote.GroupPackKeyV4(cas.Sum(across))) {
		t.Errorf("group packs: below the floor present %v, across it present %v",
			has(remote.GroupPackKeyV4(cas.Sum(below))), has(remote.GroupPackKeyV4(cas.Sum(across))))
	}
	for through, want := range map[uint64]bool{8: false, 24: true, 40: true, 48: true} {
		if has(retainCheckpoint(through).Pack.Key) != want {
			t.Errorf("checkpoint through %d: present %v", through, !want)
		}
	}
	for key, want := range map[string]bool{oldReg: false, oldPack: false, newReg: true, newPack: true} {
		if has(key) != want {
			t.Errorf("%s: present %v", key, !want)
		}
	}
	if swept, err := n.SweptV4(ctx, state); err != nil || !swept {
		t.Fatalf("after the sweep: swept %v, %v", swept, err)
	}
	// A second sweep finds the history below the floor gone, skips the
	// segments it deleted, and deletes nothing more.
	res, err = n.CleanupV4(ctx, remote.CleanupV4Options{Window: 8})
	if err != nil || len(res.Deleted) != 0 {
		t.Fatalf("second sweep: %v %v", res.Deleted, err)
	}
}

// Inside --retain the sweep deletes no history (R1); once the clock is
// past every generation at or below the floor, it does.
func TestCleanupV4KeepsTheRetentionWindow(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	var m *remote.ManifestV4
	var incs []remote.IncrementV4
	for g := 1; g <= 40; g++ {
		var parent uint64
		if m != nil {
			parent = m.Generation
		}
		next, ups, err := remote.NextV4(m, "0123456789abcdef0123456789abcdef", uint64(1000+g),
			[]remote.MemberV4{{Publication: retainID(g), Proposal: parent, Head: cas.Sum([]byte(fmt.Sprint("head ", g))), Time: uint64(1000 + g)}}, remote.GroupRef{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			if err := store.Put(ctx, u.Key, u.Data); err != nil {
				t.Fatal(err)
			}
		}
		m = next
		incs = append(incs, m.Increments[len(m.Increments)-1])
		if err := store.Put(ctx, incs[g-1].ProposalKey(), []byte("proposal")); err != nil {
			t.Fatal(err)
		}
	}
	m.Checkpoint = retainCheckpoint(16)
	data, err := remote.EncodeManifestV4(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateIfAbsent(ctx, remote.CurrentKey, data); err != nil {
		t.Fatal(err)
	}
	// Generation g was accepted at 1000 + g ms; the clock reads 1040 ms.
	n := remote.Open(store, remote.Options{Now: func() time.Time { return time.UnixMilli(1040) }})
	res, err := n.CleanupV4(ctx, remote.CleanupV4Options{Window: 8, RetainFor: 30 * time.Millisecond})
	if err != nil || len(res.Deleted) != 0 {
		t.Fatalf("generation 16 is 24 ms old, inside a window of 30: deleted %v, %v", res.Deleted, err)
	}
	res, err = n.CleanupV4(ctx, remote.CleanupV4Options{Window: 8, RetainFor: 20 * time.Millisecond})
	if err != nil || len(res.Deleted) == 0 || res.Deleted[0] != incs[0].ProposalKey() {
		t.Fatalf("past a window of 20 ms: deleted %v, %v", res.Deleted, err)
	}
	for _, inc := range incs {
		_, err := store.Head(ctx, inc.ProposalKey())
		if gone := errors.Is(err, remote.ErrNotFound); gone != (inc.Generation <= 16) {
			t.Errorf("generation %d: gone %v", inc.Generation, gone)
		}
	}
}
