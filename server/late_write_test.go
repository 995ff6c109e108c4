package server

import (
	"context"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A commit whose conditional write got no reply re-reads `current`, finds
// it unchanged and tries again under a new publication ID. Its first
// write then lands after all, so the retry loses its race and the next
// attempt finds the change already there: the notebook verifies, the
// commit is accepted once and reports the generation that accepted it.
func TestLateConditionalWriteFindsItsPackIntact(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("notes.md", "one\n")
	a.commit("seed")

	// No reply for a second: a rebuild of the commit after it has another
	// commit time, and other bytes.
	store.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Delay: time.Second, Late: true})
	defer memstore.AssertFaultsFired(t, store)
	a.write("notes.md", "one\ntwo\n")
	res := a.commit("late")
	if store.Landed() != 1 {
		t.Fatal("the delayed write never landed: the test exercised nothing")
	}
	rep, err := remote.Verify(ctx, store, remote.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("verify: %+v", f)
	}
	state, err := remote.Open(store, remote.Options{}).ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if state.Generation() != 2 || res.Generation != 2 {
		t.Fatalf("current at generation %d, the commit reported %d; want the late write's 2", state.Generation(), res.Generation)
	}
	reader := newAgent(t, store)
	reader.pull()
	if got := reader.files()["notes.md"]; got != "one\ntwo\n" {
		t.Fatalf("a fresh reader has notes.md %q", got)
	}
}
