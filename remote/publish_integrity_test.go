package remote_test

import (
	"context"
	"errors"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// published returns a store holding two accepted publications.
func published(t *testing.T) (*memstore.Mem, *remote.Notebook, remote.State) {
	t.Helper()
	m := memstore.New()
	nb := remote.Open(m, remote.Options{})
	var p proposer
	for range 2 {
		if _, err := nb.Publish(context.Background(), p.build); err != nil {
			t.Fatal(err)
		}
	}
	st, err := nb.ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m, nb, st
}

func TestCorruptCurrentIsIntegrityError(t *testing.T) {
	ctx := context.Background()
	m, nb, _ := published(t)
	good, _, _ := m.Get(ctx, remote.CurrentKey)
	for name, bad := range map[string][]byte{
		"truncated": good[:len(good)-10],
		"garbage":   []byte("\x00\xffnot a manifest"),
		"empty":     {},
		"bit flip":  append(append([]byte{}, good[:20]...), append([]byte{good[20] ^ 0x01}, good[21:]...)...),
	} {
		t.Run(name, func(t *testing.T) {
			if err := m.Put(ctx, remote.CurrentKey, bad); err != nil {
				t.Fatal(err)
			}
			_, err := nb.ReadCurrent(ctx)
			if !errors.Is(err, remote.ErrCorruptManifest) || !errors.Is(err, remote.ErrIntegrity) {
				t.Fatalf("ReadCurrent = %v, want ErrCorruptManifest", err)
			}
			built := false
			_, err = nb.Publish(ctx, func(context.Context, remote.State, string) (remote.Proposal, error) {
				built = true
				return remote.Proposal{Skip: true}, nil
			})
			if !errors.Is(err, remote.ErrCorruptManifest) || built {
				t.Fatalf("Publish over a corrupt current = %v (build called: %t)", err, built)
			}
		})
	}
}

func TestMissingOrCorruptPack(t *testing.T) {
	ctx := context.Background()
	m, nb, st := published(t)
	ref := st.Manifest.Packs()[1]
	good, _, err := m.Get(ctx, ref.Key)
	if err != nil {
		t.Fatal(err)
	}

	flipped := append([]byte{}, good...)
	flipped[len(flipped)/2] ^= 0x40
	for name, bad := range map[string][]byte{
		"bit flip":  flipped,
		"truncated": good[:len(good)-1],
		"extended":  append(append([]byte{}, good...), 0),
	} {
		if err := m.Put(ctx, ref.Key, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := nb.FetchPack(ctx, ref); !errors.Is(err, remote.ErrCorruptPack) || !errors.Is(err, remote.ErrIntegrity) {
			t.Fatalf("%s pack: FetchPack = %v, want ErrCorruptPack", name, err)
		}
	}

	if err := m.Delete(ctx, ref.Key); err != nil {
		t.Fatal(err)
	}
	_, err = nb.FetchPack(ctx, ref)
	if !errors.Is(err, remote.ErrMissingPack) || !errors.Is(err, remote.ErrIntegrity) || !errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("missing pack: FetchPack = %v, want ErrMissingPack (and ErrNotFound)", err)
	}
}

// A pack that was uploaded but never referenced changes nothing: readers
// follow `current` only, and the next publication proceeds normally.
func TestUnreferencedPackChangesNothing(t *testing.T) {
	ctx := context.Background()
	m, nb, before := published(t)
	m.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrUnavailable})
	defer memstore.AssertFaultsFired(t, m)

	var p proposer
	_, err := nb.Publish(ctx, p.build)
	if !errors.Is(err, remote.ErrUnavailable) || errors.Is(err, remote.ErrAmbiguous) {
		t.Fatalf("Publish = %v, want ErrUnavailable (the replace never reached the store)", err)
	}
	orphan := remote.IncrementKey(3, p.pubs[0])
	if _, err := m.Head(ctx, orphan); err != nil {
		t.Fatalf("the uploaded pack should exist (unreferenced): %v", err)
	}
	after, err := nb.ReadCurrent(ctx)
	if err != nil || after.ETag != before.ETag || after.Generation() != 2 {
		t.Fatalf("current changed after a failed replace: %v", err)
	}
	if _, ok := after.Manifest.Referenced()[orphan]; ok {
		t.Fatal("current references the unaccepted pack")
	}
	acc, err := nb.Publish(ctx, p.build)
	if err != nil || acc.State.Generation() != 3 || p.observed[1].ETag != before.ETag {
		t.Fatalf("next publication: %+v, %v", acc, err)
	}
}

func TestPackUploadFailureStopsPublication(t *testing.T) {
	ctx := context.Background()
	m, nb, before := published(t)
	m.Inject(memstore.Fault{Op: memstore.OpPut, KeyPrefix: remote.IncrementsPrefix, Before: remote.ErrAccessDenied})
	defer memstore.AssertFaultsFired(t, m)
	replaces := m.Calls(memstore.OpReplace)
	var p proposer
	if _, err := nb.Publish(ctx, p.build); !errors.Is(err, remote.ErrAccessDenied) {
		t.Fatalf("Publish = %v, want ErrAccessDenied", err)
	}
	if m.Calls(memstore.OpReplace) != replaces {
		t.Fatal("current was written although the pack upload failed")
	}
	if after, _ := nb.ReadCurrent(ctx); after.ETag != before.ETag {
		t.Fatal("current changed")
	}
}
