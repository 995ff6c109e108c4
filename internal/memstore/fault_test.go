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
