package remote_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// checkpointed returns a store with two checkpoints (retention 1): the
// chain before the first one is no longer referenced.
func checkpointedStore(t *testing.T) (*memstore.Mem, *treeWriter, remote.CheckpointResult) {
	t.Helper()
	m := memstore.New()
	w := newTreeWriter(m)
	w.commitN(t, 4)
	if _, err := w.nb.Checkpoint(context.Background(), remote.CheckpointOptions{Retained: 1}); err != nil {
		t.Fatal(err)
	}
	w.commitN(t, 3)
	res, err := w.nb.Checkpoint(context.Background(), remote.CheckpointOptions{Retained: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m, w, res
}

func TestCleanupRemovesOnlyUnreferencedPacksAtOrBelowCutoff(t *testing.T) {
	ctx := context.Background()
	m, w, res := checkpointedStore(t)
	cutoff := res.Checkpoint.Through // 8: generations 1-4, swap at 5, 6-8

	// Proposals that never became accepted: one at or below the cutoff
	// (dead), and an increment and a checkpoint above it (in flight).
	dead := remote.IncrementKey(3, remote.NewUUIDv7())
	inFlight := remote.IncrementKey(cutoff+2, remote.NewUUIDv7())
	cpInFlight := remote.CheckpointKey(cutoff+1, remote.NewUUIDv7())
	for _, k := range []string{dead, inFlight, cpInFlight} {
		if err := m.Put(ctx, k, []byte("proposal")); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := w.nb.ReadCurrent(ctx)
	referenced := cur.Manifest.Referenced()

	cl, err := w.nb.Cleanup(ctx, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	// The first chain (increments 1-4) is beyond retention 1: gone, with
	// the dead proposal.
	if len(cl.Deleted) != 5 || !contains(cl.Deleted, dead) {
		t.Fatalf("deleted %v, want the 4 retired increments and the dead proposal", cl.Deleted)
	}
	for _, k := range cl.Deleted {
		if _, ok := referenced[k]; ok {
			t.Fatalf("cleanup deleted the referenced pack %s", k)
		}
	}
	left := packKeys(t, m, "packs/")
	for k := range referenced {
		if !contains(left, k) {
			t.Fatalf("referenced pack %s is gone", k)
		}
	}
	for _, k := range []string{inFlight, cpInFlight} {
		if !contains(left, k) {
			t.Fatalf("cleanup deleted %s, a proposal newer than the cutoff", k)
		}
	}
	if _, _, err := m.Get(ctx, remote.CurrentKey); err != nil {
		t.Fatalf("current after cleanup: %v", err)
	}
	rep := mustVerify(t, m)
	if len(rep.Orphans) != 2 {
		t.Fatalf("orphans after cleanup %v, want the two in-flight proposals", rep.Orphans)
	}
}

// The cutoff is capped by the active checkpoint as re-read: asking for a
// cutoff beyond it never touches a pack above it.
func TestCleanupCutoffCappedByActiveCheckpoint(t *testing.T) {
	ctx := context.Background()
	m, w, res := checkpointedStore(t)
	proposal := remote.IncrementKey(res.Checkpoint.Through+1, remote.NewUUIDv7())
	if err := m.Put(ctx, proposal, []byte("proposal")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.nb.Cleanup(ctx, res.Checkpoint.Through+100); err != nil {
		t.Fatal(err)
	}
	if !contains(packKeys(t, m, remote.IncrementsPrefix), proposal) {
		t.Fatal("cleanup with a cutoff above the active checkpoint deleted a proposal above it")
	}
	mustVerify(t, m)
}

// A writer publishes, and another checkpoint is swapped in, while cleanup
// holds a delete batch it decided on: nothing any chain references
// afterwards is deleted.
func TestCleanupWhileWritersPublish(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, w, res := checkpointedStore(t)
	b := memstore.NewBarrier(2)
	m.Inject(memstore.Fault{Op: memstore.OpDelete, Barrier: b})
	done := make(chan error, 1)
	go func() {
		// Runs while the first delete is held at the barrier.
		for i := range 4 {
			if _, err := w.commit(ctx, "during cleanup", func(f map[string][]byte) {
				f["during.md"] = append(f["during.md"], byte('a'+i), '\n')
			}); err != nil {
				done <- err
				return
			}
		}
		_, err := w.nb.Checkpoint(ctx, remote.CheckpointOptions{Retained: 1})
		if err == nil {
			err = b.Wait(ctx)
		}
		done <- err
	}()
	cl, err := w.nb.Cleanup(ctx, res.Checkpoint.Through)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	memstore.AssertFaultsFired(t, m)
	if len(cl.Deleted) == 0 {
		t.Fatal("cleanup deleted nothing; the barrier test exercised no delete")
	}
	cur, _ := w.nb.ReadCurrent(ctx)
	left := packKeys(t, m, "packs/")
	for k := range cur.Manifest.Referenced() {
		if !contains(left, k) {
			t.Fatalf("pack %s, referenced after the concurrent publications, was deleted", k)
		}
	}
	if got := string(headFiles(t, m)["during.md"]); got != "a\nb\nc\nd\n" {
		t.Fatalf("during.md = %q", got)
	}
	mustVerify(t, m)
}

func TestCleanupStopsOnStoreError(t *testing.T) {
	ctx := context.Background()
	m, w, res := checkpointedStore(t)
	m.Inject(memstore.Fault{Op: memstore.OpDelete, Before: remote.ErrUnavailable})
	cl, err := w.nb.Cleanup(ctx, res.Checkpoint.Through)
	if !errors.Is(err, remote.ErrUnavailable) || len(cl.Deleted) != 0 {
		t.Fatalf("cleanup with a failing delete: %v, deleted %v", err, cl.Deleted)
	}
	memstore.AssertFaultsFired(t, m)
	mustVerify(t, m)
}
