package remote_test

import (
	"context"
	"errors"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A reply lost after `current` was replaced: Publish re-reads, finds its
// publication ID and reports acceptance, without a second attempt.
func TestAmbiguousAfterAcceptanceIsAccepted(t *testing.T) {
	for _, op := range []memstore.Op{memstore.OpCreate, memstore.OpReplace} {
		t.Run(string(op), func(t *testing.T) {
			ctx := context.Background()
			m := memstore.New()
			nb := remote.Open(m, remote.Options{Sleep: (&noSleep{}).Sleep})
			var p proposer
			if op == memstore.OpReplace {
				if _, err := nb.Publish(ctx, p.build); err != nil {
					t.Fatal(err)
				}
			}
			m.Inject(memstore.Fault{Op: op, KeyPrefix: remote.CurrentKey, After: remote.ErrAmbiguous})
			defer memstore.AssertFaultsFired(t, m)
			builds := len(p.pubs)

			acc, err := nb.Publish(ctx, p.build)
			if err != nil {
				t.Fatalf("Publish = %v, want acceptance proved by publication ID", err)
			}
			if !acc.Published || acc.Attempts != 1 || len(p.pubs) != builds+1 {
				t.Fatalf("accepted %+v after %d builds; want one attempt", acc, len(p.pubs)-builds)
			}
			cur, err := nb.ReadCurrent(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if cur.ETag != acc.State.ETag || cur.Head() != acc.State.Head() {
				t.Fatal("the resolved state is not current")
			}
			if _, ok := cur.Manifest.FindPublication(acc.Publication); !ok {
				t.Fatal("current does not hold the publication Publish reported")
			}
		})
	}
}

// A reply lost before `current` was replaced: nothing is accepted and no
// acceptance is reported; with retries, a fresh attempt is accepted instead.
func TestAmbiguousBeforeAcceptanceIsNotAccepted(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	var p proposer
	if _, err := remote.Open(m, remote.Options{}).Publish(ctx, p.build); err != nil {
		t.Fatal(err)
	}
	m.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrAmbiguous})
	defer memstore.AssertFaultsFired(t, m)

	nb := remote.Open(m, remote.Options{Retries: remote.NoRetries})
	acc, err := nb.Publish(ctx, p.build)
	if err == nil {
		t.Fatalf("Publish reported %+v for a replace that never landed", acc)
	}
	if errors.Is(err, remote.ErrAmbiguous) || !errors.Is(err, remote.ErrLostRace) {
		t.Fatalf("Publish = %v; the re-read proved the replace absent: not accepted, retryable", err)
	}
	lost := p.pubs[len(p.pubs)-1]
	cur, _ := nb.ReadCurrent(ctx)
	if _, ok := cur.Manifest.FindPublication(lost); ok || cur.Generation() != 1 {
		t.Fatal("the unaccepted publication is in current")
	}

	// With retries the next attempt, with a new publication ID, is accepted.
	m.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrAmbiguous})
	nb = remote.Open(m, remote.Options{Sleep: (&noSleep{}).Sleep})
	acc, err = nb.Publish(ctx, p.build)
	if err != nil || acc.Attempts != 2 || acc.State.Generation() != 2 {
		t.Fatalf("retry after a lost reply: %+v, %v", acc, err)
	}
}

// hookStore runs a hook around the conditional replace of `current`.
type hookStore struct {
	remote.Store
	replace func(ctx context.Context, data []byte, etag string) (string, error)
}

func (h *hookStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if key == remote.CurrentKey && h.replace != nil {
		hook := h.replace
		h.replace = nil // once
		return hook(ctx, data, etag)
	}
	return h.Store.ReplaceIfMatch(ctx, key, data, etag)
}

func TestAmbiguousAcceptedThenOthersPublished(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	var p, rival proposer
	if _, err := remote.Open(m, remote.Options{}).Publish(ctx, p.build); err != nil {
		t.Fatal(err)
	}
	h := &hookStore{Store: m}
	h.replace = func(ctx context.Context, data []byte, etag string) (string, error) {
		if _, err := m.ReplaceIfMatch(ctx, remote.CurrentKey, data, etag); err != nil {
			return "", err
		}
		if _, err := remote.Open(m, remote.Options{}).Publish(ctx, rival.build); err != nil {
			return "", err
		}
		return "", remote.ErrAmbiguous
	}
	acc, err := remote.Open(h, remote.Options{}).Publish(ctx, p.build)
	if err != nil {
		t.Fatal(err)
	}
	if !acc.Published || acc.State.Generation() != 2 || acc.State.ETag != "" {
		t.Fatalf("accepted %+v; want generation 2 with no ETag (ours is no longer current)", acc)
	}
	cur, _ := remote.Open(m, remote.Options{}).ReadCurrent(ctx)
	if cur.Generation() != 3 || cur.Manifest.Increments[1].Publication != acc.Publication {
		t.Fatal("current does not hold our publication under the rival's")
	}
}

func TestAmbiguousGenerationTakenByAnother(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	var p, rival proposer
	if _, err := remote.Open(m, remote.Options{}).Publish(ctx, p.build); err != nil {
		t.Fatal(err)
	}
	h := &hookStore{Store: m}
	h.replace = func(ctx context.Context, data []byte, etag string) (string, error) {
		if _, err := remote.Open(m, remote.Options{}).Publish(ctx, rival.build); err != nil {
			return "", err
		}
		return "", remote.ErrAmbiguous // ours never reached the store
	}
	acc, err := remote.Open(h, remote.Options{Sleep: (&noSleep{}).Sleep}).Publish(ctx, p.build)
	if err != nil {
		t.Fatal(err)
	}
	if acc.Attempts != 2 || acc.State.Generation() != 3 || p.observed[len(p.observed)-1].Generation() != 2 {
		t.Fatalf("accepted %+v; want a second attempt built on the rival's generation 2", acc)
	}
}

func TestAmbiguousCancelledButApplied(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := memstore.New()
	var p proposer
	if _, err := remote.Open(m, remote.Options{}).Publish(ctx, p.build); err != nil {
		t.Fatal(err)
	}
	h := &hookStore{Store: m}
	h.replace = func(rctx context.Context, data []byte, etag string) (string, error) {
		if _, err := m.ReplaceIfMatch(rctx, remote.CurrentKey, data, etag); err != nil {
			return "", err
		}
		cancel() // the caller gave up while the request was in flight
		return "", rctx.Err()
	}
	acc, err := remote.Open(h, remote.Options{}).Publish(ctx, p.build)
	if err != nil || !acc.Published || acc.State.Generation() != 2 {
		t.Fatalf("Publish = %+v, %v; the write landed, so it must be reported accepted", acc, err)
	}
}

func TestAmbiguousUndecidable(t *testing.T) {
	ctx := context.Background()
	t.Run("current unreadable", func(t *testing.T) {
		m := memstore.New()
		var p proposer
		if _, err := remote.Open(m, remote.Options{}).Publish(ctx, p.build); err != nil {
			t.Fatal(err)
		}
		m.Inject(memstore.Fault{Op: memstore.OpGet}) // Publish's first read passes,
		m.Inject(memstore.Fault{Op: memstore.OpReplace, After: remote.ErrAmbiguous})
		for range 3 { // every re-read fails
			m.Inject(memstore.Fault{Op: memstore.OpGet, KeyPrefix: remote.CurrentKey, Before: remote.ErrUnavailable})
		}
		defer memstore.AssertFaultsFired(t, m)
		_, err := remote.Open(m, remote.Options{Sleep: (&noSleep{}).Sleep}).Publish(ctx, p.build)
		if !errors.Is(err, remote.ErrAmbiguous) {
			t.Fatalf("Publish = %v, want ErrAmbiguous", err)
		}
	})
	t.Run("generation checkpointed away", func(t *testing.T) {
		m := memstore.New()
		var p proposer
		first, err := remote.Open(m, remote.Options{}).Publish(ctx, p.build)
		if err != nil {
			t.Fatal(err)
		}
		h := &hookStore{Store: m}
		h.replace = func(ctx context.Context, data []byte, etag string) (string, error) {
			// Someone took generation 2 and a checkpoint through 2 was then
			// swapped in with no retained chain: generation 2's increment
			// is recorded nowhere.
			head := cas.Sum([]byte("theirs"))
			cp := &remote.Manifest{Generation: 3, Head: head, Checkpoint: remote.Checkpoint{
				Pack: remote.PackRef{Key: remote.CheckpointKey(2, pubs[5]), Sum: cas.Sum([]byte("cp")), Size: 2},
				Head: head, Through: 2, Publication: pubs[5],
			}}
			enc, err := remote.EncodeManifest(cp)
			if err != nil {
				return "", err
			}
			if _, err := m.ReplaceIfMatch(ctx, remote.CurrentKey, enc, first.State.ETag); err != nil {
				return "", err
			}
			return "", remote.ErrAmbiguous
		}
		_, err = remote.Open(h, remote.Options{}).Publish(ctx, p.build)
		if !errors.Is(err, remote.ErrAmbiguous) {
			t.Fatalf("Publish = %v, want ErrAmbiguous: acceptance cannot be proved either way", err)
		}
	})
}
