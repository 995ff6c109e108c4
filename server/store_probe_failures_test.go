package server

import (
	"context"
	"os"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// A read-only call that proves the store first (the day-old verdict has
// expired) and meets an ambiguous reply on the probe's disposable key
// reports STORE_UNREACHABLE, retryable: nothing could have been published,
// so ACCEPTANCE_UNKNOWN would send the caller looking for a commit that
// never happened.
func TestReadOnlyCallsProbeFailureIsNotAcceptanceUnknown(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("f.md", "1\n")
	a.commit("seed")
	a.write("f.md", "1\nlocal\n")

	calls := []struct {
		name string
		run  func() error
	}{
		{"status", func() error { _, err := a.e.Status(ctx, ""); return err }},
		{"pull", func() error { _, err := a.e.Pull(ctx, ""); return err }},
		{"log", func() error { _, err := a.e.Log(ctx, 10); return err }},
		{"history", func() error { _, err := a.e.History(ctx, history.Query{Limit: 10}); return err }},
		{"show", func() error { _, err := a.e.Show(ctx, 1, ""); return err }},
		{"file at", func() error { _, err := a.e.FileAt(ctx, 1, "f.md"); return err }},
		{"diff", func() error { _, err := a.e.Diff(ctx, 0, 1, ""); return err }},
	}
	for _, c := range calls {
		a.e.probe.Forget() // a new process whose recorded verdict expired
		if err := os.Remove(a.e.env.ProbeFile()); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		store.Inject(memstore.Fault{Op: memstore.OpCreate, KeyPrefix: "probe/", Before: remote.ErrAmbiguous})
		de := domainErr(t, c.run(), diag.CodeStorageFailure, diag.ReasonStoreUnreachable)
		if !de.Retryable || de.Action != diag.ActionRetry {
			t.Fatalf("%s: %+v", c.name, de)
		}
		if left := store.Unfired(); len(left) != 0 {
			t.Fatalf("%s: the probe fault never fired: %v", c.name, left)
		}
	}
	if got := a.read("f.md"); got != "1\nlocal\n" {
		t.Fatalf("the local edit became %q", got)
	}
	if r := a.pull(); r.Generation != 1 {
		t.Fatalf("generation %d after failed reads", r.Generation)
	}
}
