package server

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// lateStore delays one conditional write of `current` as a server frozen
// past the client's timeout does (the chaos run's store-freeze): once
// armed, the next replace gets no reply (ErrAmbiguous, after the clock
// passed a second boundary, so that a build of the same commit made after
// it has another commit time and other bytes), and the store applies it,
// still conditional on its ETag, when the next replace arrives.
type lateStore struct {
	*memstore.Mem
	mu      sync.Mutex
	armed   bool
	pending *lateWrite
	landed  bool // the delayed write was applied (its ETag still matched)
}

func (s *lateStore) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

func (s *lateStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if key != remote.CurrentKey {
		return s.Mem.ReplaceIfMatch(ctx, key, data, etag)
	}
	s.mu.Lock()
	late, armed := s.pending, s.armed
	s.pending, s.armed = nil, false
	if armed {
		s.pending = &lateWrite{data: bytes.Clone(data), etag: etag}
	}
	s.mu.Unlock()
	if armed {
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		return "", remote.ErrAmbiguous
	}
	if late != nil {
		_, err := s.Mem.ReplaceIfMatch(ctx, key, late.data, late.etag)
		s.mu.Lock()
		s.landed = err == nil
		s.mu.Unlock()
	}
	return s.Mem.ReplaceIfMatch(ctx, key, data, etag)
}

// A commit whose conditional write got no reply re-reads `current`, finds
// it unchanged and tries again under the same publication ID (a writer
// with turns keeps one per call for its offers). Its first write then
// lands after all. The retry must have put the same pack under the key
// that write names, not a second build of the commit: the notebook
// verifies, and the commit is accepted once.
func TestLateConditionalWriteFindsItsPackIntact(t *testing.T) {
	ctx := context.Background()
	store := &lateStore{Mem: memstore.New()}
	a := newAgent(t, store, func(c *Config) { c.TurnsDir = t.TempDir() })
	a.pull()
	a.write("notes.md", "one\n")
	a.commit("seed")

	store.arm()
	a.write("notes.md", "one\ntwo\n")
	res := a.commit("late")
	if !store.landed {
		t.Fatal("the delayed write never landed: the test exercised nothing")
	}
	rep, err := remote.Verify(ctx, store.Mem, remote.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("verify: %+v", f)
	}
	state, err := remote.Open(store.Mem, remote.Options{}).ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if state.Generation() != 2 || res.Generation != 2 {
		t.Fatalf("current at generation %d, the commit reported %d; want the late write's 2", state.Generation(), res.Generation)
	}
	reader := newAgent(t, store.Mem)
	reader.pull()
	if got := reader.files()["notes.md"]; got != "one\ntwo\n" {
		t.Fatalf("a fresh reader has notes.md %q", got)
	}
}
