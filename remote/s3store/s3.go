// Package s3store is the S3 backend of remote.Store, the only package that
// imports the AWS SDK.
package s3store

// The S3 backend (DESIGN §5): one notebook is every key under Prefix in
// Bucket. Conditional writes are PutObject with If-None-Match: * (create)
// and If-Match: <etag> (replace), which AWS S3 and SeaweedFS enforce
// atomically (internal/seaweed's tests hold the evidence for SeaweedFS).
//
//	New(cfg) ─ credential chain of awschain.go (or static keys), custom endpoint,
//	             path style ─> s3Store{client, prefix, identity}
//	op ─> s3Store.call: trace whether the request was written ─> s3Client (client.go)
//	   ─> mapS3Error(kind, sent, err): the one place the client's errors become
//	      remote.ErrNotFound / remote.ErrPrecondition / remote.ErrAccessDenied / remote.ErrIntegrity /
//	      remote.ErrAmbiguous / remote.ErrRateLimited / remote.ErrUnavailable,
//	      the cause kept.
//
// Every PUT carries its SHA-256 (x-amz-checksum-sha256), which the server
// verifies before storing. Conditional writes are never retried:
// a retry after a lost response would meet our own write and report a lost
// race; the publication protocol resolves such outcomes by publication ID.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/logging"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Config configures the S3 backend.
type Config struct {
	Bucket    string
	Prefix    string // key prefix of the notebook; "" puts it at the bucket root
	Region    string // "" resolves through the AWS configuration, else us-east-1
	Endpoint  string // custom endpoint; an URL with user info is refused
	PathStyle bool
	// AccessKeyID and SecretAccessKey, when both set, replace the default
	// credential chain (tests, embedding). They never appear in Identity or
	// in an error.
	AccessKeyID     string
	SecretAccessKey string
	// Transport, when set, carries every HTTP request instead of the
	// default client (tests count requests and inject faults with it).
	Transport http.RoundTripper
}

// DefaultRegion is used when neither the config nor the AWS configuration
// names a region.
const DefaultRegion = "us-east-1"

// s3ResponseTimeout bounds the wait for response headers after a request was
// written: a stalled server then yields an ambiguous outcome instead of a
// hang. Uploads are not bounded by it (it starts after the body is sent).
const s3ResponseTimeout = 30 * time.Second

type s3Store struct {
	client   *s3Client
	prefix   string // "" or ends in "/"
	identity string
}

// New returns the S3 store (the AWS credential chain of awschain.go). It sends no
// request: an unreachable or misconfigured store shows on first use (and in
// Probe).
func New(ctx context.Context, cfg Config) (remote.Store, error) {
	if cfg.Bucket == "" {
		return nil, fmt.Errorf("%w: the S3 store needs a bucket", remote.ErrStoreURL)
	}
	if strings.ContainsAny(cfg.Bucket, "/?#@") {
		return nil, fmt.Errorf("%w: %q is not a bucket name", remote.ErrStoreURL, cfg.Bucket)
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		if err := remote.CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("%w: prefix: %w", remote.ErrStoreURL, err)
		}
		prefix += "/"
	}
	endpoint, err := checkEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}

	// The SDK's credential providers must not write to stderr on their own:
	// only our structured logs go there (the instance metadata client built
	// for the credentials keeps this logger).
	settings, err := resolveAWS(cfg, aws.Config{Logger: logging.Nop{}})
	if err != nil {
		// A shared file or the CA bundle is unreadable, or a retry setting
		// malformed; the error names the file or the value, never a secret.
		return nil, fmt.Errorf("%w: AWS configuration: %w", remote.ErrUnavailable, err)
	}
	awsCfg := settings.aws
	awsCfg.Credentials = markCredentials(awsCfg.Credentials) // mapS3Error: ErrNoCredentials
	if endpoint == "" && settings.endpoint != "" {
		// The AWS configuration (AWS_ENDPOINT_URL_S3, a profile) chose the
		// endpoint: it obeys the same rules and names the store too.
		if endpoint, err = checkEndpoint(settings.endpoint); err != nil {
			return nil, err
		}
	}
	if cfg.Transport != nil {
		awsCfg.HTTPClient = &http.Client{Transport: cfg.Transport}
	}
	client, err := newS3Client(awsCfg, cfg.Bucket, endpoint, cfg.PathStyle)
	if err != nil {
		return nil, fmt.Errorf("%w: S3 endpoint: %v", remote.ErrStoreURL, redactParseError(err))
	}
	return &s3Store{
		client:   client,
		prefix:   prefix,
		identity: s3Identity(cfg.Bucket, prefix, endpoint),
	}, nil
}

// checkEndpoint validates a custom endpoint and returns it without a
// trailing slash. User info is refused because it would put a credential
// where logs and Identity can see it.
func checkEndpoint(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: S3 endpoint: %v", remote.ErrStoreURL, redactParseError(err))
	}
	if u.User != nil {
		return "", fmt.Errorf("%w: S3 endpoint %s://%s: user info is refused; use the AWS credential chain", remote.ErrStoreURL, u.Scheme, u.Host)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("%w: S3 endpoint %s: want http(s)://host[:port]", remote.ErrStoreURL, u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", fmt.Errorf("%w: S3 endpoint %s: a query or fragment is not allowed", remote.ErrStoreURL, u.Redacted())
	}
	return strings.TrimSuffix(u.Scheme+"://"+strings.ToLower(u.Host)+u.EscapedPath(), "/"), nil
}

// s3Identity names bucket, prefix and (when custom) endpoint: two servers
// may hold buckets of the same name. Region and credentials are left out:
// neither changes which objects the store holds.
func s3Identity(bucket, prefix, endpoint string) string {
	id := "s3://" + bucket + "/" + strings.TrimSuffix(prefix, "/")
	if endpoint != "" {
		id += "?endpoint=" + url.QueryEscape(endpoint)
	}
	return id
}

func (s *s3Store) Identity() string { return s.identity }

func (s *s3Store) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := remote.CheckKey(key); err != nil {
		return nil, "", err
	}
	var data []byte
	var etag string
	err := s.call(ctx, "get", key, s3Read, func(ctx context.Context) error {
		var err error
		data, etag, err = s.client.get(ctx, s.prefix+key)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	if data == nil {
		data = []byte{}
	}
	return data, etag, nil
}

func (s *s3Store) Head(ctx context.Context, key string) (remote.ObjectInfo, error) {
	if err := remote.CheckKey(key); err != nil {
		return remote.ObjectInfo{}, err
	}
	var info remote.ObjectInfo
	err := s.call(ctx, "head", key, s3Read, func(ctx context.Context) error {
		size, etag, err := s.client.head(ctx, s.prefix+key)
		if err != nil {
			return err
		}
		info = remote.ObjectInfo{Key: key, Size: size, ETag: etag}
		return nil
	})
	return info, err
}

func (s *s3Store) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	if err := remote.CheckKey(key); err != nil {
		return "", err
	}
	return s.put(ctx, "create", key, data, s3Conditional, http.Header{"If-None-Match": {"*"}})
}

func (s *s3Store) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if err := remote.CheckKey(key); err != nil {
		return "", err
	}
	if etag == "" {
		// Without the header the PUT would be unconditional.
		return "", fmt.Errorf("%w: replace %s: no ETag to match", remote.ErrPrecondition, key)
	}
	return s.put(ctx, "replace", key, data, s3Conditional, http.Header{"If-Match": {etag}})
}

func (s *s3Store) Put(ctx context.Context, key string, data []byte) error {
	if err := remote.CheckKey(key); err != nil {
		return err
	}
	_, err := s.put(ctx, "put", key, data, s3Write, nil)
	return err
}

// put uploads data with its SHA-256, which the server checks before it
// stores anything; cond is the condition's header, nil for none.
func (s *s3Store) put(ctx context.Context, op, key string, data []byte, kind s3OpKind, cond http.Header) (string, error) {
	var etag string
	err := s.call(ctx, op, key, kind, func(ctx context.Context) error {
		var err error
		etag, err = s.client.put(ctx, s.prefix+key, data, cond, kind != s3Conditional)
		return err
	})
	if err != nil {
		return "", err
	}
	if etag == "" && kind == s3Conditional {
		// A conditional write without an ETag leaves the caller nothing to
		// match next time; the write itself happened.
		return "", fmt.Errorf("%w: %s %s: the server returned no ETag", remote.ErrIncompatible, op, key)
	}
	return etag, nil
}

func (s *s3Store) Delete(ctx context.Context, key string) error {
	if err := remote.CheckKey(key); err != nil {
		return err
	}
	err := s.call(ctx, "delete", key, s3Write, func(ctx context.Context) error {
		return s.client.delete(ctx, s.prefix+key)
	})
	if errors.Is(err, remote.ErrNotFound) {
		return nil
	}
	return err
}

func (s *s3Store) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	return s.ListAfter(ctx, prefix, "")
}

// ListAfter implements remote.ListerAfter with S3's StartAfter, so the keys
// at or before after are never sent.
func (s *s3Store) ListAfter(ctx context.Context, prefix, after string) ([]remote.ObjectInfo, error) {
	if err := remote.CheckPrefix(prefix); err != nil {
		return nil, err
	}
	startAfter := ""
	if after != "" {
		startAfter = s.prefix + after
	}
	var objs []remote.ObjectInfo
	err := s.call(ctx, "list", prefix, s3Read, func(ctx context.Context) error {
		objs = objs[:0]
		return s.client.list(ctx, s.prefix+prefix, startAfter, func(full string, size int64, etag string) {
			key, ok := strings.CutPrefix(full, s.prefix)
			if !ok || remote.CheckKey(key) != nil {
				return // not an object this store could have written
			}
			objs = append(objs, remote.ObjectInfo{Key: key, Size: size, ETag: etag})
		})
	})
	if err != nil {
		return nil, err
	}
	// S3 lists in byte order already; some compatible servers do not, and
	// one that ignores StartAfter is filtered here.
	slices.SortFunc(objs, func(a, b remote.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return remote.After(objs, after), nil
}

// call runs one operation with a trace that records whether a request
// was completely written, and maps its error.
func (s *s3Store) call(ctx context.Context, op, key string, kind s3OpKind, fn func(ctx context.Context) error) error {
	traced, sent := traceSend(ctx)
	err := fn(traced)
	if err == nil {
		return nil
	}
	return fmt.Errorf("remote: s3 %s %s: %w", op, key, mapS3Error(kind, sent.Load(), err))
}

// redactParseError drops the URL url.Parse quotes in its error, which could
// hold a password.
func redactParseError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return "unparsable"
}
