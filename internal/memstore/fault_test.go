package memstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

func TestMemFaultBeforeAndAfter(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	boom := errors.New("boom")
	m.Inject(
		memstore.Fault{Op: memstore.OpPut, KeyPrefix: "a", Before: boom},
		memstore.Fault{Op: memstore.OpPut, KeyPrefix: "b", After: boom},
	)
	defer memstore.AssertFaultsFired(t, m)

	if err := m.Put(ctx, "c", []byte("x")); err != nil {
		t.Fatalf("a fault for another key fired: %v", err)
	}
	if err := m.Put(ctx, "b", []byte("x")); !errors.Is(err, boom) {
		t.Fatalf("after-fault: %v", err)
	}
	if _, _, err := m.Get(ctx, "b"); err != nil {
		t.Fatal("an after-fault must apply the write before failing")
	}
	if err := m.Put(ctx, "a", []byte("x")); !errors.Is(err, boom) {
		t.Fatalf("before-fault: %v", err)
	}
	if _, _, err := m.Get(ctx, "a"); !errors.Is(err, remote.ErrNotFound) {
		t.Fatal("a before-fault must not apply the write")
	}
	if err := m.Put(ctx, "a", []byte("x")); err != nil {
		t.Fatalf("a fault fired twice: %v", err)
	}
	if m.Calls(memstore.OpPut) != 4 {
		t.Fatalf("Calls(put) = %d, want 4", m.Calls(memstore.OpPut))
	}
}

func TestMemFaultUnfiredIsReported(t *testing.T) {
	m := memstore.New()
	m.Inject(memstore.Fault{Op: memstore.OpDelete})
	if left := m.Unfired(); len(left) != 1 {
		t.Fatalf("Unfired = %v, want the one delete fault", left)
	}
	_ = m.Delete(context.Background(), "x")
	if left := m.Unfired(); len(left) != 0 {
		t.Fatalf("Unfired = %v after it fired", left)
	}
}

func TestMemFaultDelayHonoursContext(t *testing.T) {
	m := memstore.New()
	m.Inject(memstore.Fault{Op: memstore.OpGet, Delay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := m.Get(ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get = %v, want the deadline", err)
	}
	m.Inject(memstore.Fault{Op: memstore.OpGet, Delay: 30 * time.Millisecond})
	start := time.Now()
	_, _, _ = m.Get(context.Background(), "x")
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("a 30ms delay took %v", d)
	}
}

func TestMemFaultBarrierHoldsUntilAllArrive(t *testing.T) {
	const n = 4
	m := memstore.New()
	b := memstore.NewBarrier(n)
	for range n {
		m.Inject(memstore.Fault{Op: memstore.OpPut, Barrier: b})
	}
	defer memstore.AssertFaultsFired(t, m)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i := range n - 1 {
		wg.Go(func() {
			_ = m.Put(context.Background(), "k", []byte{byte(i)})
			mu.Lock()
			done++
			mu.Unlock()
		})
	}
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	early := done
	mu.Unlock()
	if early != 0 {
		t.Fatalf("%d writers passed the barrier before the last one arrived", early)
	}
	_ = m.Put(context.Background(), "k", []byte{9})
	wg.Wait()
}

// A Late fault holds a conditional write: no reply, nothing visible to a
// read, and the write lands, still conditional on its ETag, just before
// the next write of the key.
func TestMemFaultLateLandsBeforeTheNextWrite(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	etag, err := m.CreateIfAbsent(ctx, "current", []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	m.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: "current", Late: true})
	defer memstore.AssertFaultsFired(t, m)
	if _, err := m.ReplaceIfMatch(ctx, "current", []byte("v2"), etag); !errors.Is(err, remote.ErrAmbiguous) {
		t.Fatalf("held replace: %v, want ErrAmbiguous", err)
	}
	if data, _, _ := m.Get(ctx, "current"); string(data) != "v1" || m.Landed() != 0 {
		t.Fatalf("a read shows %q (landed %d): the held write applied before the next write", data, m.Landed())
	}
	// The retry, conditional on the same ETag, meets the held write first.
	if _, err := m.ReplaceIfMatch(ctx, "current", []byte("v2 again"), etag); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("the retry: %v, want ErrPrecondition (the held write landed first)", err)
	}
	if data, _, _ := m.Get(ctx, "current"); string(data) != "v2" || m.Landed() != 1 {
		t.Fatalf("current %q, landed %d; want the held write's v2, 1", data, m.Landed())
	}

	// Two held writes on one ETag: the first to land wins, the second no
	// longer matches and is not counted.
	cur, err := m.Head(ctx, "current")
	if err != nil {
		t.Fatal(err)
	}
	m.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: "current", Late: true},
		memstore.Fault{Op: memstore.OpReplace, KeyPrefix: "current", Late: true})
	for _, v := range []string{"a", "b"} {
		if _, err := m.ReplaceIfMatch(ctx, "current", []byte(v), cur.ETag); !errors.Is(err, remote.ErrAmbiguous) {
			t.Fatalf("held replace %s: %v", v, err)
		}
	}
	if _, err := m.CreateIfAbsent(ctx, "current", []byte("c")); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("create over the landed write: %v", err)
	}
	if data, _, _ := m.Get(ctx, "current"); string(data) != "a" || m.Landed() != 2 {
		t.Fatalf("current %q, landed %d; want a, 2", data, m.Landed())
	}
}
