package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// Violation reports which guarantee a store broke. It wraps
// ErrIncompatible, so callers test with errors.Is(err, ErrIncompatible) and
// show Guarantee to a person.
type Violation struct {
	Guarantee string // e.g. "conditional create refuses an existing object"
	Detail    string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("remote: store lacks required guarantee %q: %s", v.Guarantee, v.Detail)
}

func (v *Violation) Unwrap() error { return ErrIncompatible }

// The guarantees CheckGuarantees proves, in order.
const (
	GuaranteeCreate          = "conditional create writes an absent object"
	GuaranteeReadAfterCreate = "read-after-write after create"
	GuaranteeCreateExclusive = "conditional create refuses an existing object"
	GuaranteeReplace         = "conditional replace succeeds on a matching ETag"
	GuaranteeReadAfterWrite  = "read-after-write after replace"
	GuaranteeReplaceStale    = "conditional replace refuses a stale ETag"
	GuaranteeDelete          = "delete removes the object"
)

// CheckGuarantees proves, on key (which must not exist), the guarantees the
// publication protocol relies on: conditional create, conditional replace
// and read-after-write. It removes key before returning. A broken guarantee
// is a *Violation (wrapping ErrIncompatible); a store error (unreachable,
// access denied, ...) is returned as such, wrapped with the step that hit it.
//
// Probe runs it on a disposable key at startup and the contract suite runs
// it on every backend, so the two cannot disagree.
func CheckGuarantees(ctx context.Context, store Store, key string) (err error) {
	defer func() {
		// Best effort: a probe object left behind is harmless (cleanup and
		// verify ignore probe/), but there is no reason to keep it.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if derr := store.Delete(dctx, key); derr != nil && err == nil {
			err = fmt.Errorf("remote: probe: delete %s: %w", key, derr)
		}
	}()
	stamp := []byte(NewUUIDv7())
	first := append([]byte("probe 1 "), stamp...)
	second := append([]byte("probe 2 "), stamp...)
	third := append([]byte("probe 3 "), stamp...)

	etag1, err := store.CreateIfAbsent(ctx, key, first)
	if errors.Is(err, ErrPrecondition) {
		return &Violation{GuaranteeCreate, "a fresh key was reported as existing"}
	}
	if err != nil {
		return fmt.Errorf("remote: probe: create: %w", err)
	}
	if err := expectContent(ctx, store, key, first, etag1, GuaranteeReadAfterCreate); err != nil {
		return err
	}

	_, err = store.CreateIfAbsent(ctx, key, second)
	switch {
	case err == nil:
		return &Violation{GuaranteeCreateExclusive, "a second create of the same key succeeded"}
	case !errors.Is(err, ErrPrecondition):
		return fmt.Errorf("remote: probe: second create: %w", err)
	}
	if err := expectContent(ctx, store, key, first, etag1, GuaranteeCreateExclusive); err != nil {
		return err
	}

	etag2, err := store.ReplaceIfMatch(ctx, key, second, etag1)
	if errors.Is(err, ErrPrecondition) {
		return &Violation{GuaranteeReplace, "the ETag just read was refused"}
	}
	if err != nil {
		return fmt.Errorf("remote: probe: replace: %w", err)
	}
	if err := expectContent(ctx, store, key, second, etag2, GuaranteeReadAfterWrite); err != nil {
		return err
	}

	_, err = store.ReplaceIfMatch(ctx, key, third, etag1)
	switch {
	case err == nil:
		return &Violation{GuaranteeReplaceStale, "a replace with a stale ETag succeeded"}
	case !errors.Is(err, ErrPrecondition):
		return fmt.Errorf("remote: probe: stale replace: %w", err)
	}
	if err := expectContent(ctx, store, key, second, etag2, GuaranteeReplaceStale); err != nil {
		return err
	}

	if err := store.Delete(ctx, key); err != nil {
		return fmt.Errorf("remote: probe: delete: %w", err)
	}
	if _, _, err := store.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		if err == nil {
			return &Violation{GuaranteeDelete, "the object is still readable after delete"}
		}
		return fmt.Errorf("remote: probe: get after delete: %w", err)
	}
	return nil
}

// expectContent reads key and checks it holds want with ETag etag.
func expectContent(ctx context.Context, store Store, key string, want []byte, etag, guarantee string) error {
	got, gotETag, err := store.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return &Violation{guarantee, "the object written is not readable"}
	}
	if err != nil {
		return fmt.Errorf("remote: probe: get: %w", err)
	}
	if !bytes.Equal(got, want) {
		return &Violation{guarantee, fmt.Sprintf("read %d bytes that are not the %d bytes last written", len(got), len(want))}
	}
	if gotETag != etag {
		return &Violation{guarantee, "the ETag read differs from the ETag the write returned"}
	}
	return nil
}

// Probe proves on a disposable key (probe/<uuidv7>) that store enforces
// conditional create, conditional replace and read-after-write. A store
// that does not is refused with a *Violation wrapping ErrIncompatible;
// an unreachable or forbidden store returns that error instead.
func Probe(ctx context.Context, store Store) error {
	return CheckGuarantees(ctx, store, ProbeKey(NewUUIDv7()))
}
