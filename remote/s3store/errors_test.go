package s3store_test

// How S3 outcomes reach callers: every failure matches exactly the sentinel
// the publication protocol acts on, and keeps the SDK error as its cause.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

var sentinels = []error{remote.ErrNotFound, remote.ErrPrecondition, remote.ErrAmbiguous,
	remote.ErrUnavailable, remote.ErrAccessDenied, remote.ErrIntegrity, remote.ErrRateLimited}

// expectOnly fails unless err matches want and no other sentinel: an
// ErrNotFound that also said ErrUnavailable would be read either way.
func expectOnly(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
	for _, s := range sentinels {
		if s != want && errors.Is(err, s) {
			t.Fatalf("%s: %v matches %v as well as %v", what, err, s, want)
		}
	}
}

// storeOp runs one Store method against a store whose transport is scripted.
type storeOp struct {
	name string
	run  func(ctx context.Context, s remote.Store) error
}

var (
	opGet = storeOp{"Get", func(ctx context.Context, s remote.Store) error {
		_, _, err := s.Get(ctx, "current")
		return err
	}}
	opHead = storeOp{"Head", func(ctx context.Context, s remote.Store) error {
		_, err := s.Head(ctx, "current")
		return err
	}}
	opList = storeOp{"List", func(ctx context.Context, s remote.Store) error {
		_, err := s.List(ctx, "packs/")
		return err
	}}
	opCreate = storeOp{"CreateIfAbsent", func(ctx context.Context, s remote.Store) error {
		_, err := s.CreateIfAbsent(ctx, "current", []byte("m"))
		return err
	}}
	opReplace = storeOp{"ReplaceIfMatch", func(ctx context.Context, s remote.Store) error {
		_, err := s.ReplaceIfMatch(ctx, "current", []byte("m"), `"etag-1"`)
		return err
	}}
	opPut = storeOp{"Put", func(ctx context.Context, s remote.Store) error {
		return s.Put(ctx, "packs/p.pack", []byte("pack"))
	}}
	opDelete = storeOp{"Delete", func(ctx context.Context, s remote.Store) error {
		return s.Delete(ctx, "packs/p.pack")
	}}
)

func TestS3ResponsesMapToSentinels(t *testing.T) {
	for _, tc := range []struct {
		op     storeOp
		status int
		code   string
		want   error // nil: success
	}{
		{opGet, 404, "NoSuchKey", remote.ErrNotFound},
		{opHead, 404, "", remote.ErrNotFound},
		{opGet, 404, "NoSuchBucket", remote.ErrUnavailable}, // a missing bucket is no empty notebook
		{opGet, 403, "AccessDenied", remote.ErrAccessDenied},
		{opHead, 403, "", remote.ErrAccessDenied},
		{opPut, 403, "SignatureDoesNotMatch", remote.ErrAccessDenied},
		{opList, 401, "Unauthorized", remote.ErrAccessDenied},
		{opCreate, 412, "PreconditionFailed", remote.ErrPrecondition},
		{opReplace, 412, "PreconditionFailed", remote.ErrPrecondition},
		{opReplace, 404, "NoSuchKey", remote.ErrPrecondition}, // If-Match on a missing key: a lost race
		{opCreate, 409, "ConditionalRequestConflict", remote.ErrPrecondition},
		{opPut, 400, "BadDigest", remote.ErrIntegrity},
		{opCreate, 400, "XAmzContentSHA256Mismatch", remote.ErrIntegrity},
		{opReplace, 500, "InternalError", remote.ErrAmbiguous}, // the write may have happened
		{opCreate, 504, "GatewayTimeout", remote.ErrAmbiguous},
		{opReplace, 503, "SlowDown", remote.ErrUnavailable}, // refused, not applied
		// R2 and GCS: a name written more than about once a second.
		{opReplace, 429, "SlowDown", remote.ErrRateLimited},
		{opReplace, 429, "rateLimitExceeded", remote.ErrRateLimited},
		{opCreate, 429, "TooManyRequests", remote.ErrRateLimited},
		{opGet, 501, "NotImplemented", remote.ErrUnavailable},
		{opList, 400, "InvalidArgument", remote.ErrUnavailable},
		{opDelete, 404, "NoSuchKey", nil}, // deleting a missing key is no error
	} {
		t.Run(tc.op.name+"/"+http.StatusText(tc.status)+"/"+tc.code, func(t *testing.T) {
			canned := &cannedTransport{status: tc.status, code: tc.code}
			s := openS3(t, s3store.Config{Bucket: "b", Prefix: "nb", Endpoint: "http://127.0.0.1:1", PathStyle: true,
				AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "not-a-secret", Transport: canned})
			err := tc.op.run(context.Background(), s)
			if canned.calls.Load() == 0 {
				t.Fatal("no request reached the transport")
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
				return
			}
			expectOnly(t, tc.op.name, err, tc.want)
			// The cause stays: the status and, when the body had one, the S3 code.
			var resp *smithyhttp.ResponseError
			if !errors.As(err, &resp) || resp.HTTPStatusCode() != tc.status {
				t.Fatalf("cause lost: %v", err)
			}
			var api smithy.APIError
			if tc.code != "" && tc.op.name != "Head" && (!errors.As(err, &api) || api.ErrorCode() != tc.code) {
				t.Fatalf("S3 error code lost: %v", err)
			}
		})
	}
}

// A server on 127.0.0.1 that rate-limits every write, as R2 and GCS do
// above about one write per second to one name: each write, conditional
// or not, reports ErrRateLimited with the 429 kept as its cause, and
// nothing else. A conditional write is sent once (the SDK never retries
// it: the protocol decides); an unconditional one is retried by the SDK
// before the caller hears of it.
func TestS3RateLimitedWrites(t *testing.T) {
	var puts, conditional atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut {
			http.Error(w, "only writes are expected", http.StatusBadRequest)
			return
		}
		puts.Add(1)
		if r.Header.Get("If-Match") != "" || r.Header.Get("If-None-Match") != "" {
			conditional.Add(1)
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server at %s, want loopback", srv.URL)
	}
	s := openS3(t, s3store.Config{Bucket: "b", Prefix: "nb", Endpoint: srv.URL, PathStyle: true,
		AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "not-a-secret"})
	for _, op := range []storeOp{opReplace, opCreate, opPut} {
		before, beforeCond := puts.Load(), conditional.Load()
		err := op.run(context.Background(), s)
		expectOnly(t, op.name, err, remote.ErrRateLimited)
		var resp *smithyhttp.ResponseError
		if !errors.As(err, &resp) || resp.HTTPStatusCode() != http.StatusTooManyRequests {
			t.Fatalf("%s: cause lost: %v", op.name, err)
		}
		sent, sentCond := puts.Load()-before, conditional.Load()-beforeCond
		switch {
		case op.name != opPut.name && (sent != 1 || sentCond != 1):
			t.Fatalf("%s: %d requests (%d conditional), want the one conditional write", op.name, sent, sentCond)
		case op.name == opPut.name && (sent < 2 || sentCond != 0):
			t.Fatalf("Put: %d requests (%d conditional), want the SDK's retries of an unconditional write", sent, sentCond)
		}
	}
}

// A request that was never written cannot have been applied: unavailable,
// never ambiguous, whatever the operation.
func TestS3NothingSentIsUnavailable(t *testing.T) {
	for _, op := range []storeOp{opGet, opCreate, opReplace, opPut} {
		t.Run(op.name, func(t *testing.T) {
			ft := newFaultTransport(failBeforeSend, 1<<30, func(*http.Request) bool { return true })
			s := openS3(t, s3store.Config{Bucket: "b", Endpoint: "http://127.0.0.1:1", AccessKeyID: "AKIDEXAMPLE",
				SecretAccessKey: "not-a-secret", Transport: ft})
			err := op.run(context.Background(), s)
			expectOnly(t, op.name, err, remote.ErrUnavailable)
			if !errors.Is(err, errInjected) {
				t.Fatalf("cause lost: %v", err)
			}
		})
	}
}

func TestS3ConnectionRefusedIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	s := openS3(t, s3store.Config{Bucket: "b", Endpoint: endpoint, PathStyle: true, AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "not-a-secret"})
	for _, op := range []storeOp{opCreate, opReplace, opGet} {
		err := op.run(context.Background(), s)
		expectOnly(t, op.name, err, remote.ErrUnavailable)
		var opErr *net.OpError
		if !errors.As(err, &opErr) || opErr.Op != "dial" {
			t.Fatalf("%s: cause is not the refused dial: %v", op.name, err)
		}
	}
}

// Against the real server: the reply to a conditional write is lost after
// the server applied it. The caller must hear "ambiguous" (the write did
// happen), never a lost race or plain failure.
func TestS3ReplyLostAfterWriteIsAmbiguous(t *testing.T) {
	srv := seaweed.Shared(t)
	ft := newFaultTransport(dropReply, 2, isConditionalPut("current"))
	s := seaweedStore(t, srv, ft)
	ctx := context.Background()

	_, err := s.CreateIfAbsent(ctx, "current", []byte("v1"))
	expectOnly(t, "create with its reply lost", err, remote.ErrAmbiguous)
	data, etag, err := s.Get(ctx, "current")
	if err != nil || string(data) != "v1" {
		t.Fatalf("after the lost reply current is %q, %v; the create was applied", data, err)
	}
	_, err = s.ReplaceIfMatch(ctx, "current", []byte("v2"), etag)
	expectOnly(t, "replace with its reply lost", err, remote.ErrAmbiguous)
	if data, _, err := s.Get(ctx, "current"); err != nil || string(data) != "v2" {
		t.Fatalf("after the lost reply current is %q, %v; the replace was applied", data, err)
	}
	if ft.Fired() != 2 {
		t.Fatalf("fault fired %d times, want 2", ft.Fired())
	}
}

// A body corrupted on the wire fails the checksum the PUT carries: the
// server refuses it, nothing is stored, and the caller hears ErrIntegrity.
func TestS3CorruptUploadRefused(t *testing.T) {
	srv := seaweed.Shared(t)
	ft := newFaultTransport(corruptBody, 2, isPut)
	s := seaweedStore(t, srv, ft)
	ctx := context.Background()
	err := s.Put(ctx, "packs/p.pack", []byte("a pack whose bytes flip on the way"))
	expectOnly(t, "corrupted Put", err, remote.ErrIntegrity)
	_, err = s.CreateIfAbsent(ctx, "current", []byte("a manifest whose bytes flip"))
	expectOnly(t, "corrupted CreateIfAbsent", err, remote.ErrIntegrity)
	if ft.Fired() != 2 {
		t.Fatalf("fault fired %d times, want 2", ft.Fired())
	}
	objs, err := s.List(ctx, "")
	if err != nil || len(objs) != 0 {
		t.Fatalf("refused uploads left objects: %v, %v", objs, err)
	}
}

func TestS3AccessDenied(t *testing.T) {
	srv := seaweed.Shared(t)
	ctx := context.Background()
	writer := seaweedStore(t, srv, nil)
	if err := writer.Put(ctx, "packs/p.pack", []byte("x")); err != nil {
		t.Fatal(err)
	}

	wrong := seaweedConfig(srv)
	wrong.SecretAccessKey = "wrong-" + srv.SecretKey
	_, _, err := openS3(t, wrong).Get(ctx, "packs/p.pack")
	expectOnly(t, "Get with a wrong secret", err, remote.ErrAccessDenied)

	ro := seaweedConfig(srv)
	ro.AccessKeyID, ro.SecretAccessKey = srv.ReadOnlyAccessKey, srv.ReadOnlySecretKey
	reader := openS3(t, ro)
	_, err = reader.CreateIfAbsent(ctx, "current", []byte("m"))
	expectOnly(t, "CreateIfAbsent by a read-only identity", err, remote.ErrAccessDenied)
	if _, _, err := reader.Get(ctx, "current"); !errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("a denied create stored current: %v", err)
	}
}

func TestS3MissingBucketIsNotAnEmptyNotebook(t *testing.T) {
	srv := seaweed.Shared(t)
	cfg := seaweedConfig(srv)
	cfg.Bucket = "no-such-bucket-" + remote.NewUUIDv7()[:8]
	_, _, err := openS3(t, cfg).Get(context.Background(), remote.CurrentKey)
	expectOnly(t, "Get in a missing bucket", err, remote.ErrUnavailable)
}
