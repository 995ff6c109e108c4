package s3store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/slivingdoc/slivingdoc/remote"
)

// s3OpKind decides what an error without a response means.
type s3OpKind int

const (
	s3Read        s3OpKind = iota // Get, Head, List: no effect, so never ambiguous
	s3Write                       // Put, Delete: idempotent, retried (the SDK's retryer)
	s3Conditional                 // CreateIfAbsent, ReplaceIfMatch: never retried
)

// traceSend returns ctx with an HTTP trace that sets *sent once a request
// (headers and body) has been written to a connection. Before that point
// the server cannot have applied it; after it, only a response can tell.
func traceSend(ctx context.Context) (context.Context, *atomic.Bool) {
	sent := new(atomic.Bool)
	trace := &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				sent.Store(true)
			}
		},
	}
	return httptrace.WithClientTrace(ctx, trace), sent
}

// mapS3Error is the one place the client's errors (client.go: the SDK's error
// types) become the package's sentinels; the error stays wrapped as the cause (a 412 is a lost race, yet its request
// ID still belongs in the log).
//
//	response 412; 409 or 404 to a conditional    remote.ErrPrecondition
//	response 404 (NoSuchKey, NotFound)            remote.ErrNotFound
//	response 404 NoSuchBucket                     remote.ErrUnavailable (misconfigured, not an empty notebook)
//	credentials could not be obtained             remote.ErrNoCredentials (nothing sent)
//	response 401, 403                             remote.ErrAccessDenied
//	response 400 BadDigest and kin                remote.ErrIntegrity (the server refused our checksum)
//	response 500/502/504 to a write               remote.ErrAmbiguous
//	response 429 to a write                       remote.ErrRateLimited (R2, GCS: a key written too often)
//	any other response                            remote.ErrUnavailable
//	no response, request never written            remote.ErrUnavailable (connection refused, cancelled before sending)
//	no response, request written, read            remote.ErrUnavailable
//	no response, request written, write           remote.ErrAmbiguous (timeout or reset after sending)
func mapS3Error(kind s3OpKind, sent bool, err error) error {
	var creds *credentialsError
	if errors.As(err, &creds) {
		return fmt.Errorf("%w: %w", remote.ErrNoCredentials, err)
	}
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() != 0 {
		return fmt.Errorf("%w: %w", s3StatusSentinel(kind, resp.HTTPStatusCode(), s3ErrorCode(err)), err)
	}
	if kind != s3Read && sent {
		return fmt.Errorf("%w: %w", remote.ErrAmbiguous, err)
	}
	return fmt.Errorf("%w: %w", remote.ErrUnavailable, err)
}

func s3StatusSentinel(kind s3OpKind, status int, code string) error {
	switch {
	case status == 412:
		return remote.ErrPrecondition
	case status == 409 && kind == s3Conditional:
		// AWS answers a conditional write that collides with a concurrent
		// one with 409 ConditionalRequestConflict: ours was not applied.
		return remote.ErrPrecondition
	case status == 404 && code == "NoSuchBucket":
		return remote.ErrUnavailable
	case status == 404 && kind == s3Conditional:
		// If-Match on a missing key: the ETag we hold is no longer
		// current, which is a lost race like any other.
		return remote.ErrPrecondition
	case status == 404:
		return remote.ErrNotFound
	case status == 401 || status == 403:
		return remote.ErrAccessDenied
	case status == 400 && (code == "BadDigest" || code == "InvalidDigest" || code == "XAmzContentSHA256Mismatch"):
		return remote.ErrIntegrity
	case kind != s3Read && status == http.StatusTooManyRequests:
		// R2 and GCS refuse a write to a name written within about the
		// last second with 429, whatever code the body carries; nothing
		// was applied. AWS's 503 SlowDown stays unavailable: it limits
		// a prefix's whole request rate (thousands per second), which
		// no backing off on one key relieves.
		return remote.ErrRateLimited
	case kind != s3Read && (status == 500 || status == 502 || status == 504):
		// The server (or a proxy) failed after it may have applied the write.
		return remote.ErrAmbiguous
	default:
		return remote.ErrUnavailable
	}
}

// s3ErrorCode returns the S3 error code ("NoSuchKey", "BadDigest", ...), or
// "" when the response carried none (HEAD responses have no body).
func s3ErrorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// credentialsError marks a failure of the credential chain. The SDK's
// providers report one only as text ("failed to refresh cached
// credentials, ..."), so the chain is wrapped where the client is built
// and mapS3Error recognises the mark by type.
type credentialsError struct{ err error }

func (e *credentialsError) Error() string { return e.err.Error() }
func (e *credentialsError) Unwrap() error { return e.err }

// markedCredentials is the client's credential chain with its failures
// marked. A cancelled or timed-out call is left as it is: the chain may
// have had credentials to give.
type markedCredentials struct{ aws.CredentialsProvider }

func (m markedCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := m.CredentialsProvider.Retrieve(ctx)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return c, &credentialsError{err}
	}
	return c, err
}

// markCredentials wraps p (nil stays nil: the client then signs nothing).
func markCredentials(p aws.CredentialsProvider) aws.CredentialsProvider {
	if p == nil {
		return nil
	}
	return markedCredentials{p}
}
