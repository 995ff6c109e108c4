package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

func readCurrent(t *testing.T, store remote.Store) *remote.Manifest {
	t.Helper()
	st, err := remote.Open(store, remote.Options{}).ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Manifest
}

func verifyWhole(t *testing.T, store remote.Store) {
	t.Helper()
	rep, err := remote.Verify(context.Background(), store, remote.VerifyOptions{})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}

// A checkpoint that fails leaves the commit and accepted state alone; the
// commit of the next due generation (every CheckpointPacks generations
// past the active checkpoint) builds it again, and the next fold that
// LISTs (here another writer's first commit) makes it the active one.
func TestCheckpointFailureNeverFailsTheCommit(t *testing.T) {
	m := memstore.New()
	m.Inject(memstore.Fault{Op: memstore.OpPut, KeyPrefix: remote.CheckpointsPrefix, Before: remote.ErrUnavailable})
	a := newAgent(t, m, withCheckpoints(2, 1))
	a.pull()
	for i := range 2 {
		a.write("n.md", fmt.Sprint(i, "\n"))
		a.commit("n")
	}
	a.e.publishing.Background.Wait()
	memstore.AssertFaultsFired(t, m)
	if mf := readCurrent(t, m); mf.Generation != 2 || !mf.Checkpoint.IsGenesis() {
		t.Fatalf("a failed checkpoint changed current: generation %d", mf.Generation)
	}
	for i := 2; i < 4; i++ {
		a.write("n.md", fmt.Sprint(i, "\n"))
		if res := a.commit("n"); res.Generation != uint64(i+1) {
			t.Fatalf("commit after a failed checkpoint: generation %d", res.Generation)
		}
	}
	a.e.publishing.Background.Wait()
	b := newAgent(t, m)
	b.pull()
	b.write("b.md", "b\n")
	b.commit("b")
	if mf := readCurrent(t, m); mf.Checkpoint.Through != 4 {
		t.Fatalf("the retried checkpoint: through %d", mf.Checkpoint.Through)
	}
	verifyWhole(t, m)
}

func TestNewRefusesBadCheckpointSettings(t *testing.T) {
	for _, c := range []Config{{CheckpointPacks: -1}, {RetainedCheckpoints: -1}, {RetainedCheckpoints: 65}} {
		c.Store, c.PrivateRoot, c.WorkspaceRoot = memstore.New(), t.TempDir(), t.TempDir()
		if _, err := New(c); err == nil {
			t.Fatalf("New accepted %+v", c)
		}
	}
}
