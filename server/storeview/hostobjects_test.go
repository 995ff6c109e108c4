package storeview

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// recordingStore records the requests made of its store ("OP key").
type recordingStore struct {
	remote.Store
	mu   sync.Mutex
	reqs []string
}

func (r *recordingStore) add(op, key string) {
	r.mu.Lock()
	r.reqs = append(r.reqs, op+" "+key)
	r.mu.Unlock()
}

// take returns the requests recorded since the last take.
func (r *recordingStore) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

func (r *recordingStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	r.add("GET", key)
	return r.Store.Get(ctx, key)
}

func (r *recordingStore) Head(ctx context.Context, key string) (remote.ObjectInfo, error) {
	r.add("HEAD", key)
	return r.Store.Head(ctx, key)
}

func (r *recordingStore) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	r.add("CREATE", key)
	return r.Store.CreateIfAbsent(ctx, key, data)
}

func (r *recordingStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	r.add("REPLACE", key)
	return r.Store.ReplaceIfMatch(ctx, key, data, etag)
}

func (r *recordingStore) Put(ctx context.Context, key string, data []byte) error {
	r.add("PUT", key)
	return r.Store.Put(ctx, key, data)
}

func (r *recordingStore) Delete(ctx context.Context, key string) error {
	r.add("DELETE", key)
	return r.Store.Delete(ctx, key)
}

func (r *recordingStore) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	r.add("LIST", prefix)
	return r.Store.List(ctx, prefix)
}

// A damaged copy (a crash tore it: copies are not fsynced) is never
// used: the object is read from the store again, and the copy replaced.
func TestDamagedHostCopyIsReadFromTheStore(t *testing.T) {
	store := &recordingStore{Store: memstore.New()}
	dir := t.TempDir()
	h := newHostObjects(store, func() string { return dir })
	ctx := context.Background()
	data := []byte("a group pack's bytes")
	key := remote.GroupPackKeyV4(cas.Sum(data))
	if err := h.Put(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	store.take()
	if got, _, err := h.Get(ctx, key); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get: %q, %v", got, err)
	}
	if reqs := store.take(); len(reqs) != 0 {
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
	if reqs := store.take(); len(reqs) != 1 || reqs[0] != "GET "+key {
		t.Fatalf("requests %v, want one GET of %s (the torn copy replaced by the store's bytes)", reqs, key)
	}
}
