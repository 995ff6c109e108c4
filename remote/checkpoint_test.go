package remote_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

func TestCheckpointFoldsTheActiveChain(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	w := newTreeWriter(m)
	w.commitN(t, 6)
	before := headFiles(t, m)
	old, _ := w.nb.ReadCurrent(ctx)

	res, err := w.nb.Checkpoint(ctx, remote.CheckpointOptions{Retained: 1, MinIncrements: 5})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := w.nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mf := cur.Manifest
	_, chains := chainsNow(t, w.nb)
	if cur.ETag != res.State.ETag || mf.Generation != 7 || mf.Head != old.Head() {
		t.Fatalf("after the checkpoint: generation %d (want 7), head moved %t", mf.Generation, mf.Head != old.Head())
	}
	if mf.Checkpoint != res.Checkpoint || mf.Checkpoint.Through != 6 || mf.Checkpoint.Head != old.Head() || len(chains[0].Increments) != 0 {
		t.Fatalf("checkpoint %+v with %d active increments", mf.Checkpoint, len(chains[0].Increments))
	}
	if len(chains) != 2 || len(chains[1].Increments) != 6 || !chains[1].Checkpoint.IsGenesis() {
		t.Fatalf("retained chains: %+v", chains[1:])
	}
	if res.Builds != 1 || res.Attempts != 1 || !bytes.Equal(res.Pack, mustGet(t, m, res.Checkpoint.Pack.Key)) {
		t.Fatalf("builds %d attempts %d, or the returned pack is not the stored one", res.Builds, res.Attempts)
	}
	// A reader of the active chain downloads one pack and sees the same notebook.
	if got := chains[0].Packs(); len(got) != 1 || got[0] != res.Checkpoint.Pack {
		t.Fatalf("active packs %v", got)
	}
	if after := headFiles(t, m); !maps.EqualFunc(before, after, bytes.Equal) {
		t.Fatal("the checkpointed notebook reads differently")
	}
	mustVerify(t, m)

	// Writers continue on the new chain; the next checkpoint retires the
	// oldest chain beyond the retention.
	w.commitN(t, 5)
	if _, err := w.nb.Checkpoint(ctx, remote.CheckpointOptions{Retained: 1, MinIncrements: 5}); err != nil {
		t.Fatal(err)
	}
	_, chains = chainsNow(t, w.nb)
	if len(chains) != 2 || chains[1].Checkpoint != res.Checkpoint {
		t.Fatalf("retention 1 after two checkpoints keeps %+v", chains[1:])
	}
	mustVerify(t, m)
}

func TestCheckpointBelowThresholdWritesNothing(t *testing.T) {
	m := memstore.New()
	w := newTreeWriter(m)
	w.commitN(t, 3)
	puts := m.Calls(memstore.OpPut) + m.Calls(memstore.OpReplace)
	_, err := w.nb.Checkpoint(context.Background(), remote.CheckpointOptions{Retained: 1, MinIncrements: 4})
	if !errors.Is(err, remote.ErrNoCheckpoint) {
		t.Fatalf("Checkpoint under the threshold = %v, want ErrNoCheckpoint", err)
	}
	if m.Calls(memstore.OpPut)+m.Calls(memstore.OpReplace) != puts {
		t.Fatal("a checkpoint under the threshold wrote to the store")
	}
	if _, err := remote.Open(memstore.New(), remote.Options{}).Checkpoint(context.Background(), remote.CheckpointOptions{}); !errors.Is(err, remote.ErrNoCheckpoint) {
		t.Fatalf("Checkpoint of an empty notebook = %v", err)
	}
}

func TestCheckpointRetentionZeroDropsTheOldChain(t *testing.T) {
	m := memstore.New()
	w := newTreeWriter(m)
	w.commitN(t, 4)
	_, err := w.nb.Checkpoint(context.Background(), remote.CheckpointOptions{Retained: 0})
	if err != nil {
		t.Fatal(err)
	}
	// Version 2 keeps the newest increment listed (it names head), as a
	// partial chain: not a chain a reader can read from.
	if _, chains := chainsNow(t, w.nb); len(chains) != 1 && (len(chains) != 2 || !chains[1].Partial) {
		t.Fatalf("retention 0 keeps %d chains", len(chains)-1)
	}
	mustVerify(t, m)
}

// firstReplaceHook runs once, before the first conditional replace of
// `current` it forwards.
type firstReplaceHook struct {
	remote.Store
	once func()
}

func (h *firstReplaceHook) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if f := h.once; f != nil && key == remote.CurrentKey {
		h.once = nil
		f()
	}
	return h.Store.ReplaceIfMatch(ctx, key, data, etag)
}

// A writer that wins while the checkpoint is being swapped in costs the
// checkpoint one manifest rewrite, not a new pack: its increments stay in
// the new tail.
func TestCheckpointLostRaceRewritesOnlyTheManifest(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	w := newTreeWriter(m)
	w.commitN(t, 5)
	hook := &firstReplaceHook{Store: m, once: func() {
		w.mustCommit(t, "late/a.md", "a\n")
		w.mustCommit(t, "late/b.md", "b\n")
	}}
	nb := remote.Open(hook, remote.Options{Sleep: fastSleep})
	res, err := nb.Checkpoint(ctx, remote.CheckpointOptions{Retained: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Builds != 1 || res.Attempts != 2 {
		t.Fatalf("builds %d attempts %d, want 1 and 2", res.Builds, res.Attempts)
	}
	if n := len(packKeys(t, m, remote.CheckpointsPrefix)); n != 1 {
		t.Fatalf("%d checkpoint packs uploaded, want 1", n)
	}
	mf := res.State.Manifest
	_, chains := chainsNow(t, nb)
	if mf.Generation != 8 || mf.Checkpoint.Through != 5 || len(chains[0].Increments) != 2 || chains[0].Increments[0].Generation != 6 {
		t.Fatalf("generation %d, through %d, tail %d", mf.Generation, mf.Checkpoint.Through, len(chains[0].Increments))
	}
	files := headFiles(t, m)
	if string(files["late/a.md"]) != "a\n" || string(files["late/b.md"]) != "b\n" {
		t.Fatal("increments accepted during the checkpoint are lost")
	}
	mustVerify(t, m)
}

// An increment accepted during the checkpoint may restore content the
// checkpointed head no longer has, relying on the old chain for its
// objects. The swap must not leave that increment unreadable: the
// checkpoint is rebuilt with those objects.
func TestCheckpointAddsObjectsTheTailReusesFromTheOldChain(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	w := newTreeWriter(m)
	big := bytes.Repeat([]byte("restored content that is chunked into a file object\n"), 400)
	if _, err := w.commit(ctx, "add", func(f map[string][]byte) { f["keep.md"] = []byte("k\n"); f["gone.md"] = big }); err != nil {
		t.Fatal(err)
	}
	var bigObjs []cas.ID // objects of gone.md, for the writer that still has them
	{
		mem := cas.NewObjectSet()
		if _, err := cas.WriteFile(mem, big); err != nil {
			t.Fatal(err)
		}
		bigObjs = mem.IDs()
	}
	if _, err := w.commit(ctx, "delete", func(f map[string][]byte) { delete(f, "gone.md") }); err != nil {
		t.Fatal(err)
	}
	hook := &firstReplaceHook{Store: m, once: func() {
		// A writer whose cache still holds the old chain's objects packs
		// only the new tree and commit.
		old := newTreeWriter(m)
		old.skipHave = func(id cas.ID) bool {
			for _, b := range bigObjs {
				if b == id {
					return true
				}
			}
			return false
		}
		if _, err := old.commit(ctx, "restore", func(f map[string][]byte) { f["gone.md"] = big }); err != nil {
			t.Error(err)
		}
	}}
	res, err := remote.Open(hook, remote.Options{Sleep: fastSleep}).Checkpoint(ctx, remote.CheckpointOptions{Retained: 0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Builds != 2 {
		t.Fatalf("builds = %d, want 2 (the tail needed objects)", res.Builds)
	}
	if got := headFiles(t, m)["gone.md"]; !bytes.Equal(got, big) {
		t.Fatal("the restored file does not read from the new chain")
	}
	// Orphans: the first (insufficient) checkpoint pack, and with
	// retention 0 the two folded increments.
	rep := mustVerify(t, m)
	var cps int
	for _, o := range rep.Orphans {
		if isCP, _, _, _ := remote.ParsePackKey(o.Key); isCP {
			cps++
		}
	}
	if len(rep.Orphans) != 3 || cps != 1 {
		t.Fatalf("orphans %v, want one checkpoint and two increments", rep.Orphans)
	}
}

// Two workers checkpoint the same prefix: exactly one wins; the loser's
// pack is an orphan, which a later cleanup removes.
func TestCompetingCheckpointsOneWins(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	w := newTreeWriter(m)
	w.commitN(t, 6)
	// Both upload their pack before either swaps it in.
	b := memstore.NewBarrier(2)
	m.Inject(memstore.Fault{Op: memstore.OpPut, KeyPrefix: remote.CheckpointsPrefix, Barrier: b},
		memstore.Fault{Op: memstore.OpPut, KeyPrefix: remote.CheckpointsPrefix, Barrier: b})
	type outcome struct {
		res remote.CheckpointResult
		err error
	}
	out := make(chan outcome, 2)
	for range 2 {
		go func() {
			res, err := remote.Open(m, remote.Options{Sleep: fastSleep}).Checkpoint(ctx, remote.CheckpointOptions{Retained: 1})
			out <- outcome{res, err}
		}()
	}
	var won, superseded int
	var winner remote.Checkpoint
	for range 2 {
		o := <-out
		switch {
		case o.err == nil:
			won++
			winner = o.res.Checkpoint
		case errors.Is(o.err, remote.ErrCheckpointSuperseded):
			superseded++
		default:
			t.Fatalf("checkpoint worker: %v", o.err)
		}
	}
	memstore.AssertFaultsFired(t, m)
	if won != 1 || superseded != 1 {
		t.Fatalf("%d won, %d superseded; want exactly one winner", won, superseded)
	}
	cur, _ := w.nb.ReadCurrent(ctx)
	if cur.Manifest.Checkpoint != winner || cur.Generation() != 7 {
		t.Fatalf("current names %+v at generation %d", cur.Manifest.Checkpoint, cur.Generation())
	}
	rep := mustVerify(t, m)
	if len(rep.Orphans) != 1 || rep.Orphans[0].Key == winner.Pack.Key {
		t.Fatalf("orphans %v, want the loser's pack", rep.Orphans)
	}
	loser := rep.Orphans[0].Key

	// A later checkpoint's cleanup removes the loser's pack.
	w.commitN(t, 3)
	res, err := w.nb.Checkpoint(ctx, remote.CheckpointOptions{Retained: 1})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := w.nb.Cleanup(ctx, res.Checkpoint.Through)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(cl.Deleted, loser) {
		t.Fatalf("cleanup deleted %v, not the loser's pack %s", cl.Deleted, loser)
	}
	if rep := mustVerify(t, m); len(rep.Orphans) != 0 {
		t.Fatalf("orphans after cleanup: %v", rep.Orphans)
	}
}

func mustGet(t testing.TB, s remote.Store, key string) []byte {
	t.Helper()
	data, _, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
