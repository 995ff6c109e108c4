package remote_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

// The object's bytes are documented in docs/storage.md; this pins them.
func TestStoreIDObjectBytes(t *testing.T) {
	id := "0123456789abcdef0123456789abcdef"
	want := "slivingdoc store-id 1\n0123456789abcdef0123456789abcdef\n"
	if got := string(remote.EncodeStoreID(id)); got != want {
		t.Fatalf("EncodeStoreID = %q, want %q", got, want)
	}
	back, err := remote.DecodeStoreID([]byte(want))
	if err != nil || back != id {
		t.Fatalf("DecodeStoreID = %q, %v", back, err)
	}
	for _, bad := range []string{
		"",
		"slivingdoc store-id 1\n0123456789abcdef0123456789abcdef",     // no final newline
		"slivingdoc store-id 1\n0123456789abcdef0123456789abcdef\n\n", // trailing byte
		"slivingdoc store-id 2\n0123456789abcdef0123456789abcdef\n",   // unknown version
		"slivingdoc store-id 1\n0123456789ABCDEF0123456789abcdef\n",   // upper case
		"slivingdoc store-id 1\n0123456789abcdef0123456789abcdeg\n",   // not hex
		"slivingdoc store-id 1\r\n0123456789abcdef0123456789abcde\n",  // CRLF
		"slivingdoc store-id 1\n0123456789abcdef0123456789abcdef0\n",  // too long
	} {
		if _, err := remote.DecodeStoreID([]byte(bad)); !errors.Is(err, remote.ErrIntegrity) {
			t.Errorf("DecodeStoreID(%q) = %v, want an integrity error", bad, err)
		}
	}
	a, b := remote.NewStoreID(), remote.NewStoreID()
	if !remote.IsStoreID(a) || a == b {
		t.Fatalf("NewStoreID gave %q and %q", a, b)
	}
}

// A store without an ID reads as not yet named; the first writer names it
// and the name never changes; racing writers agree on one name.
func TestEnsureStoreIDNamesOnce(t *testing.T) {
	ctx := context.Background()
	f, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, store := range map[string]remote.Store{"mem": memstore.New(), "file": f} {
		t.Run(name, func(t *testing.T) {
			if id, err := remote.ReadStoreID(ctx, store); err != nil || id != "" {
				t.Fatalf("ReadStoreID on a new store = %q, %v; want not yet named", id, err)
			}
			const writers = 8
			ids := make([]string, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Go(func() {
					id, err := remote.EnsureStoreID(ctx, store)
					if err != nil {
						t.Errorf("EnsureStoreID: %v", err)
					}
					ids[i] = id
				})
			}
			wg.Wait()
			for _, id := range ids {
				if id != ids[0] || !remote.IsStoreID(id) {
					t.Fatalf("racing writers named the store %q", ids)
				}
			}
			if id, err := remote.ReadStoreID(ctx, store); err != nil || id != ids[0] {
				t.Fatalf("ReadStoreID = %q, %v; want %q", id, err, ids[0])
			}
			if id, err := remote.EnsureStoreID(ctx, store); err != nil || id != ids[0] {
				t.Fatalf("EnsureStoreID again = %q, %v; want %q", id, err, ids[0])
			}
		})
	}
}

// A create whose reply is lost is settled by reading back what landed.
func TestEnsureStoreIDAfterAmbiguousCreate(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	m.Inject(memstore.Fault{Op: memstore.OpCreate, KeyPrefix: remote.StoreIDKey, After: remote.ErrAmbiguous})
	id, err := remote.EnsureStoreID(ctx, m)
	memstore.AssertFaultsFired(t, m)
	if err != nil {
		t.Fatalf("EnsureStoreID = %v", err)
	}
	data, _, err := m.Get(ctx, remote.StoreIDKey)
	if err != nil || !bytes.Equal(data, remote.EncodeStoreID(id)) {
		t.Fatalf("stored %q, %v; want the ID %q", data, err, id)
	}
}

// A damaged object is an integrity error, never a silent new identity.
func TestReadStoreIDRefusesDamage(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	if err := m.Put(ctx, remote.StoreIDKey, []byte("garbage\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.ReadStoreID(ctx, m); !errors.Is(err, remote.ErrCorruptStoreID) {
		t.Fatalf("ReadStoreID = %v, want ErrCorruptStoreID", err)
	}
	if _, err := remote.EnsureStoreID(ctx, m); !errors.Is(err, remote.ErrCorruptStoreID) {
		t.Fatalf("EnsureStoreID = %v, want ErrCorruptStoreID", err)
	}
}

// Verify names a damaged store-id object; a sound one, or none, is fine.
func TestVerifyChecksStoreID(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	rep, err := remote.Verify(ctx, m, remote.VerifyOptions{})
	if err != nil || !rep.OK() {
		t.Fatalf("verify of an empty store: %+v, %v", rep, err)
	}
	if _, err := remote.EnsureStoreID(ctx, m); err != nil {
		t.Fatal(err)
	}
	if rep, err = remote.Verify(ctx, m, remote.VerifyOptions{}); err != nil || !rep.OK() {
		t.Fatalf("verify of a named store: %+v, %v", rep, err)
	}
	if err := m.Put(ctx, remote.StoreIDKey, []byte("slivingdoc store-id 1\nnot an id\n")); err != nil {
		t.Fatal(err)
	}
	rep, err = remote.Verify(ctx, m, remote.VerifyOptions{})
	if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Code != remote.FindingStoreIDCorrupt || rep.Findings[0].Key != remote.StoreIDKey {
		t.Fatalf("verify of a damaged store ID: %+v, %v", rep, err)
	}
}
