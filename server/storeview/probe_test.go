package storeview

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// The probe runs once per store per day, not per process: a proved
// verdict is recorded, and a verdict that reads a fresh record makes no
// request. An unexpected store error forgets the verdict and its record,
// so the next call proves the store again; an expected one (a lost race)
// keeps both. An expired record is proved again. A store that refuses
// writes is read-only for this process: proved without a record.
func TestVerdictIsProvedOnceAndForgottenOnTrouble(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	store := &remotetest.Recorder{Store: mem}
	file := filepath.Join(t.TempDir(), "probe")
	at := func() string { return file }
	log := slog.New(slog.DiscardHandler)
	recorded := func() bool {
		_, err := os.Stat(file)
		return err == nil
	}

	var v Verdict
	if err := v.Prove(ctx, store, at, log); err != nil {
		t.Fatal(err)
	}
	if reqs := store.Take(); len(reqs) == 0 || !recorded() {
		t.Fatalf("first proof: requests %v, recorded %t", reqs, recorded())
	}
	if err := v.Prove(ctx, store, at, log); err != nil {
		t.Fatal(err)
	}
	var next Verdict // another process
	if err := next.Prove(ctx, store, at, log); err != nil {
		t.Fatal(err)
	}
	if reqs := store.Take(); len(reqs) != 0 {
		t.Fatalf("a held or recorded verdict proved again: %v", reqs)
	}

	next.Trouble(fmt.Errorf("put: %w", remote.ErrLostRace), at, log)
	next.Trouble(context.Canceled, at, log)
	if err := next.Prove(ctx, store, at, log); err != nil {
		t.Fatal(err)
	}
	if reqs := store.Take(); len(reqs) != 0 || !recorded() {
		t.Fatalf("an expected error forgot the verdict: requests %v, recorded %t", reqs, recorded())
	}

	next.Trouble(fmt.Errorf("get: %w", remote.ErrUnavailable), at, log)
	if recorded() {
		t.Fatal("the record kept after an unexpected store error")
	}
	if err := next.Prove(ctx, store, at, log); err != nil {
		t.Fatal(err)
	}
	if reqs := store.Take(); len(reqs) == 0 || !recorded() {
		t.Fatalf("after trouble: requests %v, recorded %t", reqs, recorded())
	}

	old, _ := json.Marshal(probeVerdict{ProvedAt: time.Now().Add(-probeMaxAge - time.Hour).Unix()})
	if err := os.WriteFile(file, old, 0o600); err != nil {
		t.Fatal(err)
	}
	var late Verdict
	if err := late.Prove(ctx, store, at, log); err != nil {
		t.Fatal(err)
	}
	if reqs := store.Take(); len(reqs) == 0 {
		t.Fatal("an expired verdict trusted")
	}

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	mem.Inject(memstore.Fault{Op: memstore.OpCreate, KeyPrefix: remote.ProbePrefix, Before: remote.ErrAccessDenied})
	var readOnly Verdict
	if err := readOnly.Prove(ctx, store, at, log); err != nil {
		t.Fatalf("a store that refuses writes: %v, want read-only", err)
	}
	if left := mem.Unfired(); len(left) != 0 {
		t.Fatalf("the refusal never came: %v", left)
	}
	if recorded() {
		t.Fatal("a read-only verdict recorded")
	}
	if err := readOnly.Prove(ctx, store, at, log); err != nil {
		t.Fatal(err)
	}
	store.Take()
	readOnly.Forget()
	if err := readOnly.Prove(ctx, store, at, log); err != nil {
		t.Fatal(err)
	}
	if reqs := store.Take(); len(reqs) == 0 || !recorded() {
		t.Fatalf("a forgotten verdict not proved again: requests %v, recorded %t", reqs, recorded())
	}
}
