package remote

import (
	"fmt"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

const (
	errIntegrity    noinit.Error = "remote: integrity violation"
	errAccessDenied noinit.Error = "remote: access denied"
)

// Sentinels every backend maps its errors to, wrapping the original cause.
// They are static data (internal/noinit): declaring them costs a process
// nothing before main.
var (
	ErrNotFound     error = noinit.Error("remote: object not found")
	ErrPrecondition error = noinit.Error("remote: precondition failed") // a lost race, never a storage failure
	ErrAmbiguous    error = noinit.Error("remote: outcome unknown")     // the request may or may not have been applied
	ErrUnavailable  error = noinit.Error("remote: store unreachable")
	ErrAccessDenied error = errAccessDenied
	ErrIntegrity    error = errIntegrity // corrupt manifest, pack checksum or size mismatch
	ErrIncompatible error = noinit.Error("remote: store lacks required guarantees")
	ErrLostRace     error = noinit.Error("remote: publication lost the race") // retries exhausted
	// ErrRateLimited: the store refused a write because the key (or the
	// bucket) is written too often, and applied nothing. Cloudflare R2
	// and Google Cloud Storage answer HTTP 429 above about one write per
	// second to one object name, so writers racing for `current` meet it
	// as often as a lost race: on a contended key it is one, to retry
	// after backing off at least that second, never a store failure.
	ErrRateLimited error = noinit.Error("remote: write rate limited")
)

// Refinements of ErrIntegrity: an error matching one of these also matches
// ErrIntegrity, so callers that only care about "integrity" need not list
// them. They let the caller name the reason (CORRUPT_MANIFEST, ...).
var (
	ErrCorruptManifest error = &noinit.Wrapped{Msg: "remote: corrupt manifest: remote: integrity violation", Base: errIntegrity}
	ErrCorruptPack     error = &noinit.Wrapped{Msg: "remote: corrupt pack: remote: integrity violation", Base: errIntegrity}
	ErrMissingPack     error = &noinit.Wrapped{Msg: "remote: missing pack: remote: integrity violation", Base: errIntegrity}
	// ErrGenerationRegressed: `current` reports a lower generation than
	// one already seen (or is absent while newer packs exist): restored
	// from an older copy, or deleted (docs/operations.md).
	ErrGenerationRegressed error = &noinit.Wrapped{Msg: "remote: generation went backwards: remote: integrity violation", Base: errIntegrity}
)

// ErrFormatNewer: `current` names a format version this build does not
// read, newer than every one it does (a store a later slivingdoc wrote).
// Not corruption: the store is fine, the binary is old. FormatVersionError
// carries the version.
var ErrFormatNewer error = noinit.Error("remote: the store's format is newer than this build reads")

// FormatVersionError is the ErrFormatNewer of one manifest: the version
// it names and the newest this build reads.
type FormatVersionError struct {
	Version, Newest uint64
}

func (e *FormatVersionError) Error() string {
	return fmt.Sprintf("format version %d is not supported by this build (reads versions 1 to %d)", e.Version, e.Newest)
}

// Is makes errors.Is(err, ErrFormatNewer) hold.
func (e *FormatVersionError) Is(target error) bool { return target == ErrFormatNewer }

// ErrNoCredentials refines ErrAccessDenied: the client found no usable
// credentials, so no request was signed or sent. Unlike an unreachable
// store, a retry cannot help until the operator provides some, and unlike
// a refusal the store never saw the request; callers that only care about
// "denied" need not list it.
var ErrNoCredentials error = &noinit.Wrapped{Msg: "remote: no usable credentials: remote: access denied", Base: errAccessDenied}

// ErrGenerationOverflow is returned when the accepted generation is the
// largest uint64: the counter never wraps, so nothing can be published.
var ErrGenerationOverflow error = noinit.Error("remote: generation counter exhausted")

// ErrInvalidKey is returned for a key a backend refuses to address (empty,
// absolute, with "." or ".." segments, ...). It is a programming error, not
// a store condition.
var ErrInvalidKey error = noinit.Error("remote: invalid object key")

// ErrStoreURL is returned for a store URL or S3 configuration that cannot
// name a store (remote/storeurl, remote/s3store).
var ErrStoreURL error = noinit.Error("remote: invalid store URL")
