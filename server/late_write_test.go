package server

import (
	"context"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A commit whose conditional write got no reply re-reads `current`, finds
// it unchanged and tries again under the same publication ID (a writer
// with turns keeps one per call for its offers). Its first write then
// lands after all. The retry must have put the same pack under the key
// that write names, not a second build of the commit: the notebook
// verifies, and the commit is accepted once.
func TestLateConditionalWriteFindsItsPackIntact(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) { c.TurnsDir = t.TempDir() })
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
