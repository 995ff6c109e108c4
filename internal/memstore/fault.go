package memstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Op names a remote.Store request, for scripting faults and counting requests.
type Op string

// The remote.Store requests.
const (
	OpGet     Op = "get"
	OpHead    Op = "head"
	OpCreate  Op = "create"
	OpReplace Op = "replace"
	OpPut     Op = "put"
	OpDelete  Op = "delete"
	OpList    Op = "list"
)

// Fault is one scripted misbehaviour of a Mem request. Faults are consumed
// in the order they were injected: a request takes the first unfired fault
// whose Op matches and whose KeyPrefix prefixes its key (for List: its
// prefix). A Fault with no effect lets one matching request through
// untouched, which is how a test targets the second request rather than the
// first.
type Fault struct {
	Op        Op
	KeyPrefix string        // "" matches every key
	Delay     time.Duration // latency before the request is applied (honours ctx)
	Barrier   *Barrier      // wait here before the request is applied
	Before    error         // return this (wrapped) instead of applying; wins over After
	After     error         // apply, then return this (wrapped): the lost-response case
	// Late holds the request instead of applying it and returns Before
	// (remote.ErrAmbiguous if nil): the store applies it as it was sent (a
	// conditional write still conditional on its ETag) just before the
	// next write of the same key. A server frozen past the client's
	// timeout does that: a re-read meanwhile shows it absent.
	Late bool

	fired bool
}

func (f *Fault) String() string {
	return fmt.Sprintf("fault{%s %q delay=%v barrier=%t before=%v after=%v late=%t}", f.Op, f.KeyPrefix, f.Delay, f.Barrier != nil, f.Before, f.After, f.Late)
}

func (f *Fault) wait(ctx context.Context) error {
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	if f.Barrier != nil {
		return f.Barrier.Wait(ctx)
	}
	return nil
}

// Inject appends faults to the script.
func (m *Mem) Inject(faults ...Fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range faults {
		f := faults[i]
		m.faults = append(m.faults, &f)
	}
}

// Unfired returns the injected faults no request has consumed yet. A test
// that scripts faults ends by asserting this is empty: a fault that never
// fired means the test did not exercise what it claims.
func (m *Mem) Unfired() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, f := range m.faults {
		if !f.fired {
			out = append(out, f.String())
		}
	}
	return out
}

// takeFault marks and returns the first matching unfired fault; m.mu is held.
func (m *Mem) takeFault(op Op, key string) *Fault {
	for _, f := range m.faults {
		if !f.fired && f.Op == op && strings.HasPrefix(key, f.KeyPrefix) {
			f.fired = true
			return f
		}
	}
	return nil
}

// Barrier holds callers until n of them have arrived, then releases all of
// them at once. It is single-use.
type Barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	open    chan struct{}
}

// NewBarrier returns a barrier for n callers (at least 1).
func NewBarrier(n int) *Barrier {
	return &Barrier{n: max(n, 1), open: make(chan struct{})}
}

// Wait blocks until n callers have called Wait or ctx is done.
func (b *Barrier) Wait(ctx context.Context) error {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AssertFaultsFired fails t if any fault scripted on m was never consumed:
// a recovery test whose fault never fired proves nothing. Call it at the end
// of (or deferred in) every test that scripts faults.
func AssertFaultsFired(t testing.TB, m *Mem) {
	t.Helper()
	if left := m.Unfired(); len(left) > 0 {
		t.Errorf("scripted faults never fired: %v", left)
	}
}
