package remotetest

import (
	"context"
	"sync"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Recorder is a Store that records every request made of it, as "OP key"
// (OP one of GET, HEAD, CREATE, REPLACE, PUT, DELETE, LIST; LIST records
// its prefix), before passing it on: the tests that count or order a
// component's requests read them with Take.
type Recorder struct {
	remote.Store
	mu   sync.Mutex
	reqs []string
}

func (r *Recorder) add(op, key string) {
	r.mu.Lock()
	r.reqs = append(r.reqs, op+" "+key)
	r.mu.Unlock()
}

// Take returns the requests recorded since the last Take.
func (r *Recorder) Take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

func (r *Recorder) Get(ctx context.Context, key string) ([]byte, string, error) {
	r.add("GET", key)
	return r.Store.Get(ctx, key)
}

func (r *Recorder) Head(ctx context.Context, key string) (remote.ObjectInfo, error) {
	r.add("HEAD", key)
	return r.Store.Head(ctx, key)
}

func (r *Recorder) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	r.add("CREATE", key)
	return r.Store.CreateIfAbsent(ctx, key, data)
}

func (r *Recorder) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	r.add("REPLACE", key)
	return r.Store.ReplaceIfMatch(ctx, key, data, etag)
}

func (r *Recorder) Put(ctx context.Context, key string, data []byte) error {
	r.add("PUT", key)
	return r.Store.Put(ctx, key, data)
}

func (r *Recorder) Delete(ctx context.Context, key string) error {
	r.add("DELETE", key)
	return r.Store.Delete(ctx, key)
}

func (r *Recorder) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	r.add("LIST", prefix)
	return r.Store.List(ctx, prefix)
}
