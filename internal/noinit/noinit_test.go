package noinit_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

const errBase noinit.Error = "pkg: corrupt data"

var (
	ErrBase      error = errBase
	ErrTruncated error = &noinit.Wrapped{Msg: "pkg: corrupt data: truncated", Base: errBase}
	ErrOther     error = noinit.Error("pkg: other")
)

// A sentinel reads and matches as the errors.New and fmt.Errorf values it
// replaces: same message, errors.Is through wrapping by %w, and no match
// between two sentinels of different messages.
func TestSentinelsMatchAsErrorsNewAndErrorf(t *testing.T) {
	old := errors.New("pkg: corrupt data")
	oldTruncated := fmt.Errorf("%w: truncated", old)
	if ErrTruncated.Error() != oldTruncated.Error() || ErrBase.Error() != old.Error() {
		t.Fatalf("messages %q, %q; want %q, %q", ErrBase, ErrTruncated, old, oldTruncated)
	}
	wrapped := fmt.Errorf("reading x: %w", ErrTruncated)
	if !errors.Is(wrapped, ErrTruncated) || !errors.Is(wrapped, ErrBase) {
		t.Fatal("a wrapped Wrapped does not match itself and its base")
	}
	if errors.Is(wrapped, ErrOther) || errors.Is(ErrBase, ErrTruncated) || errors.Is(ErrOther, ErrBase) {
		t.Fatal("sentinels of different messages match")
	}
	var w *noinit.Wrapped
	if !errors.As(wrapped, &w) || w != ErrTruncated {
		t.Fatal("errors.As does not find the Wrapped")
	}
}

// Lazy builds its value once, on the first Get, whatever the number of
// goroutines asking at once.
func TestLazyBuildsOnceOnFirstUse(t *testing.T) {
	var l noinit.Lazy[*int]
	builds := 0
	build := func() *int { builds++; v := 42; return &v }
	var wg sync.WaitGroup
	got := make([]*int, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = l.Get(build) }()
	}
	wg.Wait()
	if builds != 1 {
		t.Fatalf("built %d times, want 1", builds)
	}
	for _, p := range got {
		if p != got[0] || *p != 42 {
			t.Fatal("Get returned different values")
		}
	}
}
