package remote

import (
	"errors"
	"fmt"
)

// Sentinels every backend maps its errors to, wrapping the original cause.
var (
	ErrNotFound     = errors.New("remote: object not found")
	ErrPrecondition = errors.New("remote: precondition failed") // a lost race, never a storage failure
	ErrAmbiguous    = errors.New("remote: outcome unknown")     // the request may or may not have been applied
	ErrUnavailable  = errors.New("remote: store unreachable")
	ErrAccessDenied = errors.New("remote: access denied")
	ErrIntegrity    = errors.New("remote: integrity violation") // corrupt manifest, pack checksum or size mismatch
	ErrIncompatible = errors.New("remote: store lacks required guarantees")
	ErrLostRace     = errors.New("remote: publication lost the race") // retries exhausted
	// ErrRateLimited: the store refused a write because the key (or the
	// bucket) is written too often, and applied nothing. Cloudflare R2
	// and Google Cloud Storage answer HTTP 429 above about one write per
	// second to one object name, so writers racing for `current` meet it
	// as often as a lost race: on a contended key it is one, to retry
	// after backing off at least that second, never a store failure.
	ErrRateLimited = errors.New("remote: write rate limited")
)

// Refinements of ErrIntegrity: an error matching one of these also matches
// ErrIntegrity, so callers that only care about "integrity" need not list
// them. They let the caller name the reason (CORRUPT_MANIFEST, ...).
var (
	ErrCorruptManifest = fmt.Errorf("remote: corrupt manifest: %w", ErrIntegrity)
	ErrCorruptPack     = fmt.Errorf("remote: corrupt pack: %w", ErrIntegrity)
	ErrMissingPack     = fmt.Errorf("remote: missing pack: %w", ErrIntegrity)
	// ErrGenerationRegressed: `current` reports a lower generation than
	// one already seen (or is absent while newer packs exist): restored
	// from an older copy, or deleted (docs/operations.md).
	ErrGenerationRegressed = fmt.Errorf("remote: generation went backwards: %w", ErrIntegrity)
)

// ErrNoCredentials refines ErrAccessDenied: the client found no usable
// credentials, so no request was signed or sent. Unlike an unreachable
// store, a retry cannot help until the operator provides some, and unlike
// a refusal the store never saw the request; callers that only care about
// "denied" need not list it.
var ErrNoCredentials = fmt.Errorf("remote: no usable credentials: %w", ErrAccessDenied)

// ErrGenerationOverflow is returned when the accepted generation is the
// largest uint64: the counter never wraps, so nothing can be published.
var ErrGenerationOverflow = errors.New("remote: generation counter exhausted")

// ErrInvalidKey is returned for a key a backend refuses to address (empty,
// absolute, with "." or ".." segments, ...). It is a programming error, not
// a store condition.
var ErrInvalidKey = errors.New("remote: invalid object key")

// ErrStoreURL is returned for a store URL or S3 configuration that cannot
// name a store (remote/storeurl, remote/s3store).
var ErrStoreURL = errors.New("remote: invalid store URL")
