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
