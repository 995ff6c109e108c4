// Package memstore is the in-memory remote.Store: deterministic, safe for
// concurrent use, with scripted faults (fault.go) and a mode that ignores
// preconditions. It is a test double for the publication protocol, the
// engine and the benchmarks, which is why it is internal: a user embedding
// slivingdoc gets the file and S3 stores, not a store that forgets.
package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Mem is the in-memory store: deterministic, safe for concurrent use, with
// scripted faults (fault.go) and a mode that ignores preconditions so the
// probe can be shown to refuse such a store.
type Mem struct {
	identity string

	mu      sync.Mutex
	objects map[string]memObject
	seq     uint64 // ETag source: every write gets a new one, even for equal bytes
	faults  []*Fault
	calls   map[Op]int
	ignore  bool
	held    map[string][]func() error // requests a Late fault holds, by key
	landed  int                       // held requests applied without error
}

type memObject struct {
	data []byte
	etag string
}

// New returns an empty in-memory store.
func New() *Mem {
	return &Mem{
		identity: "mem:" + remote.NewUUIDv7(), // two Mems never share private state
		objects:  map[string]memObject{},
		calls:    map[Op]int{},
		held:     map[string][]func() error{},
	}
}

// Landed returns how many requests held by Late faults were applied
// without error (a held conditional write whose ETag no longer matched is
// not counted).
func (m *Mem) Landed() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.landed
}

// IgnorePreconditions makes CreateIfAbsent and ReplaceIfMatch write
// unconditionally, like a store without conditional writes.
func (m *Mem) IgnorePreconditions(ignore bool) {
	m.mu.Lock()
	m.ignore = ignore
	m.mu.Unlock()
}

// Calls returns how many requests of op the store received (faulted ones
// included): the request count a real store would bill.
func (m *Mem) Calls(op Op) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[op]
}

// Identity implements remote.Store.
func (m *Mem) Identity() string { return m.identity }

// Get implements remote.Store.
func (m *Mem) Get(ctx context.Context, key string) ([]byte, string, error) {
	var data []byte
	var etag string
	err := m.do(ctx, OpGet, key, func() error {
		o, ok := m.objects[key]
		if !ok {
			return fmt.Errorf("mem: get %q: %w", key, remote.ErrNotFound)
		}
		data, etag = slices.Clone(o.data), o.etag
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return data, etag, nil
}

// Head implements remote.Store.
func (m *Mem) Head(ctx context.Context, key string) (remote.ObjectInfo, error) {
	var info remote.ObjectInfo
	err := m.do(ctx, OpHead, key, func() error {
		o, ok := m.objects[key]
		if !ok {
			return fmt.Errorf("mem: head %q: %w", key, remote.ErrNotFound)
		}
		info = remote.ObjectInfo{Key: key, Size: int64(len(o.data)), ETag: o.etag}
		return nil
	})
	return info, err
}

// CreateIfAbsent implements remote.Store.
func (m *Mem) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	var etag string
	err := m.do(ctx, OpCreate, key, func() error {
		if _, ok := m.objects[key]; ok && !m.ignore {
			return fmt.Errorf("mem: create %q: exists: %w", key, remote.ErrPrecondition)
		}
		etag = m.write(key, data)
		return nil
	})
	if err != nil {
		return "", err
	}
	return etag, nil
}

// ReplaceIfMatch implements remote.Store.
func (m *Mem) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	var next string
	err := m.do(ctx, OpReplace, key, func() error {
		o, ok := m.objects[key]
		if !m.ignore && (!ok || o.etag != etag) {
			return fmt.Errorf("mem: replace %q: etag does not match: %w", key, remote.ErrPrecondition)
		}
		next = m.write(key, data)
		return nil
	})
	if err != nil {
		return "", err
	}
	return next, nil
}

// Put implements remote.Store.
func (m *Mem) Put(ctx context.Context, key string, data []byte) error {
	return m.do(ctx, OpPut, key, func() error {
		m.write(key, data)
		return nil
	})
}

// Delete implements remote.Store.
func (m *Mem) Delete(ctx context.Context, key string) error {
	return m.do(ctx, OpDelete, key, func() error {
		delete(m.objects, key)
		return nil
	})
}

// List implements remote.Store.
func (m *Mem) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	return m.ListAfter(ctx, prefix, "")
}

// ListAfter implements remote.ListerAfter: one request, like List.
func (m *Mem) ListAfter(ctx context.Context, prefix, after string) ([]remote.ObjectInfo, error) {
	var out []remote.ObjectInfo
	err := m.do(ctx, OpList, prefix, func() error {
		for k, o := range m.objects {
			if strings.HasPrefix(k, prefix) && k > after {
				out = append(out, remote.ObjectInfo{Key: k, Size: int64(len(o.data)), ETag: o.etag})
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b remote.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, err
}

// write stores a copy of data under key; m.mu is held.
func (m *Mem) write(key string, data []byte) string {
	m.seq++
	etag := `"m` + strconv.FormatUint(m.seq, 10) + `"`
	m.objects[key] = memObject{data: slices.Clone(data), etag: etag}
	return etag
}

// do runs one request: key check, the requests a Late fault held on the
// key (before a write), the scripted fault (if any), then apply under the
// lock. Latency and barriers are waited out before the lock is
// taken, so racing callers really do arrive together.
func (m *Mem) do(ctx context.Context, op Op, key string, apply func() error) error {
	if op == OpList {
		if err := remote.CheckPrefix(key); err != nil {
			return err
		}
	} else if err := remote.CheckKey(key); err != nil {
		return err
	}
	m.mu.Lock()
	m.calls[op]++
	if op != OpGet && op != OpHead && op != OpList {
		for _, apply := range m.held[key] {
			if apply() == nil {
				m.landed++
			}
		}
		delete(m.held, key)
	}
	f := m.takeFault(op, key)
	m.mu.Unlock()

	if f != nil {
		if err := f.wait(ctx); err != nil {
			return err
		}
		if f.Late {
			m.mu.Lock()
			m.held[key] = append(m.held[key], apply)
			m.mu.Unlock()
			return fmt.Errorf("mem: %s %q: no reply, the request is held: %w", op, key, cmp.Or(f.Before, remote.ErrAmbiguous))
		}
		if f.Before != nil {
			return fmt.Errorf("mem: %s %q: injected before applying: %w", op, key, f.Before)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	err := apply()
	m.mu.Unlock()
	if err == nil && f != nil && f.After != nil {
		return fmt.Errorf("mem: %s %q: injected after applying: %w", op, key, f.After)
	}
	return err
}
