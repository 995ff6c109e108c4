package storeview

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// A damaged copy (a crash tore it: copies are not fsynced) is never
// used: the object is read from the store again, and the copy replaced.
func TestDamagedHostCopyIsReadFromTheStore(t *testing.T) {
	store := &remotetest.Recorder{Store: memstore.New()}
	dir := t.TempDir()
	h := newHostObjects(store, func() string { return dir })
	ctx := context.Background()
	data := []byte("a group pack's bytes")
	key := remote.GroupPackKeyV4(cas.Sum(data))
	if err := h.Put(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	store.Take()
	if got, _, err := h.Get(ctx, key); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get: %q, %v", got, err)
	}
	if reqs := store.Take(); len(reqs) != 0 {
		t.Fatalf("a kept copy read from the store: %v", reqs)
	}
	copies, err := filepath.Glob(filepath.Join(dir, "*", "*"))
	if err != nil || len(copies) != 1 {
		t.Fatalf("copies %v (%v), want one", copies, err)
	}
	if err := os.WriteFile(copies[0], data[:5], 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, _, err := h.Get(ctx, key); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get of a torn copy: %q, %v", got, err)
		}
	}
	if reqs := store.Take(); len(reqs) != 1 || reqs[0] != "GET "+key {
		t.Fatalf("requests %v, want one GET of %s (the torn copy replaced by the store's bytes)", reqs, key)
	}
}
