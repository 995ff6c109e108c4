package parallel_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/parallel"
)

// Every index runs exactly once, never more than limit at a time.
func TestForBounded(t *testing.T) {
	const n, limit = 200, 4
	var running, peak atomic.Int32
	seen := make([]atomic.Int32, n)
	err := parallel.For(n, limit, func(i int) error {
		r := running.Add(1)
		for {
			p := peak.Load()
			if r <= p || peak.CompareAndSwap(p, r) {
				break
			}
		}
		time.Sleep(100 * time.Microsecond)
		seen[i].Add(1)
		running.Add(-1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("index %d ran %d times", i, c)
		}
	}
	if p := peak.Load(); p > limit || p < 1 {
		t.Fatalf("peak concurrency %d, limit %d", p, limit)
	}
}

// The first error is returned, and no call starts after it.
func TestForStopsAfterError(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int32
	err := parallel.For(1000, 1, func(i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if c := calls.Load(); c > 5 {
		t.Fatalf("%d calls after an error at the fourth, want it to stop", c)
	}
	if err := parallel.For(0, 8, func(int) error { t.Fatal("called for n = 0"); return nil }); err != nil {
		t.Fatal(err)
	}
}
