package s3store

// The S3 requests the store makes, over net/http, signed with the SDK's
// Signature Version 4 signer and retried by the SDK's retryers. We do not
// use the SDK's S3 client: its package initialisation (the endpoint rules
// and their tables) and the 1.5 MB it adds to the binary cost every process
// of ours at start-up, S3 store or not, and the store needs only five
// operations: GetObject, HeadObject, PutObject (plain, If-None-Match: * or
// If-Match), DeleteObject and ListObjectsV2. What the S3 client did besides
// is kept: the same paths, queries and headers (client_test.go compares
// them), the retry loop of the SDK's retry middleware, and signing at the
// server's clock once a response has told it. A page of ListObjectsV2 is
// read by a scanner of its own (listpage.go), by encoding/xml only when
// the scanner refuses it.
//
// The errors are the SDK's own types, so that mapS3Error and the SDK's
// retryers classify them as they would the S3 client's:
//
//	a response other than 2xx   *smithy.OperationError ─> *awshttp.ResponseError
//	                            ─> *smithyhttp.ResponseError ─> *smithy.GenericAPIError (the S3 error code)
//	no response                 *smithy.OperationError ─> *smithyhttp.RequestSendError ─> the transport's error
//	retries exhausted           *retry.MaxAttemptsError around either

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithytime "github.com/aws/smithy-go/time"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// s3Client sends the store's requests to one bucket.
type s3Client struct {
	http    aws.HTTPClient
	creds   aws.CredentialsProvider
	signer  *v4.Signer
	region  string
	scheme  string
	host    string // the endpoint's host, with the bucket in front when virtual
	path    string // the endpoint's path, then /bucket when path style; no trailing slash
	retryer aws.RetryerV2
	// skew is the server's clock minus ours (nanoseconds), learnt from the
	// last response's Date: requests are signed at our time plus skew, so
	// that a machine whose clock is off still signs requests S3 accepts,
	// as the SDK's clients do.
	skew atomic.Int64
}

// newS3Client addresses bucket at endpoint ("" for AWS's, in the region):
// in the host name (virtual-hosted style) unless pathStyle, the endpoint is
// an IP address or the bucket cannot be a host name, as the SDK does.
func newS3Client(cfg aws.Config, bucket, endpoint string, pathStyle bool) (*s3Client, error) {
	if endpoint == "" {
		domain := "amazonaws.com"
		if strings.HasPrefix(cfg.Region, "cn-") {
			domain = "amazonaws.com.cn"
		}
		endpoint = "https://s3." + cfg.Region + "." + domain
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	c := &s3Client{
		http:   cfg.HTTPClient,
		creds:  cfg.Credentials,
		region: cfg.Region,
		scheme: u.Scheme,
		host:   u.Host,
		path:   strings.TrimSuffix(u.EscapedPath(), "/"),
		// S3 signs the path as sent: the signer must not escape it again.
		signer:  v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }),
		retryer: newRetryer(cfg),
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if !pathStyle && net.ParseIP(u.Hostname()) == nil && virtualHostable(bucket, u.Scheme == "https") {
		c.host = bucket + "." + c.host
	} else {
		c.path += "/" + s3Escape(bucket, false)
	}
	return c, nil
}

// virtualHostable reports whether bucket can be the first label of a host
// name: 3 to 63 lower-case letters, digits, hyphens and (but not over TLS,
// where the wildcard certificate covers one label only) dots.
func virtualHostable(bucket string, tls bool) bool {
	if len(bucket) < 3 || len(bucket) > 63 || bucket[0] == '-' || bucket[len(bucket)-1] == '-' || bucket[0] == '.' {
		return false
	}
	for i := 0; i < len(bucket); i++ {
		switch c := bucket[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		case c == '.' && !tls:
		default:
			return false
		}
	}
	return true
}

// newRetryer is the retryer the SDK's S3 client builds from the same
// settings: standard (3 attempts, exponential backoff with jitter, a retry
// quota) or adaptive (the same plus client-side rate limiting).
func newRetryer(cfg aws.Config) aws.RetryerV2 {
	var std []func(*retry.StandardOptions)
	if n := cfg.RetryMaxAttempts; n != 0 {
		std = append(std, func(o *retry.StandardOptions) { o.MaxAttempts = n })
	}
	if cfg.RetryMode == aws.RetryModeAdaptive {
		return retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) { o.StandardOptions = append(o.StandardOptions, std...) })
	}
	return retry.NewStandard(std...)
}

// s3Request is one operation.
type s3Request struct {
	op     string // S3's name of the operation, for errors
	method string
	key    string // the object's full key; "" addresses the bucket
	query  map[string]string
	header http.Header
	body   []byte
	// retry: the request may be sent again after a retryable failure. A
	// conditional write is sent once: a retry after a lost reply would meet
	// our own write and report a lost race.
	retry bool
}

// emptySHA256 is the hex SHA-256 of an empty payload.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// do sends r, retrying as the retryer says, and returns a 2xx response
// whose body the caller closes.
func (c *s3Client) do(ctx context.Context, r s3Request) (*http.Response, error) {
	payloadHash := emptySHA256
	if len(r.body) > 0 {
		sum := sha256.Sum256(r.body)
		payloadHash = hex.EncodeToString(sum[:])
	}
	resp, err := c.retried(ctx, r, payloadHash)
	if err != nil {
		return nil, &smithy.OperationError{ServiceID: "S3", OperationName: r.op, Err: err}
	}
	return resp, nil
}

// retried is the SDK's retry loop (aws/retry's Attempt middleware): an
// attempt token (the adaptive mode's rate limiter), the attempt, then for a
// retryable failure a retry-quota token and the retryer's delay.
func (c *s3Client) retried(ctx context.Context, r s3Request, payloadHash string) (*http.Response, error) {
	var retryer aws.RetryerV2 = aws.NopRetryer{}
	if r.retry {
		retryer = c.retryer
	}
	maxAttempts := retryer.MaxAttempts()
	releaseRetry := func(error) error { return nil }
	skew := time.Duration(c.skew.Load())
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		releaseAttempt, err := retryer.GetAttemptToken(ctx)
		if err != nil {
			return nil, fmt.Errorf("failed to get retry Send token, %w", err)
		}
		resp, serverSkew, known, err := c.attempt(ctx, r, payloadHash, skew)
		_ = releaseRetry(err)
		_ = releaseAttempt(err)
		if known {
			c.skew.Store(int64(serverSkew))
		}
		if err == nil {
			return resp, nil
		}
		if known {
			err = clockSkewed(err, skew, serverSkew)
			skew = serverSkew
		}
		if !retryer.IsErrorRetryable(err) {
			return nil, err
		}
		if maxAttempts > 0 && attempt >= maxAttempts {
			return nil, &retry.MaxAttemptsError{Attempt: attempt, Err: err}
		}
		rel, quotaErr := retryer.GetRetryToken(ctx, err)
		if quotaErr != nil {
			return nil, errors.Join(err, quotaErr)
		}
		releaseRetry = rel
		delay, delayErr := retryer.RetryDelay(attempt, err)
		if delayErr != nil {
			return nil, delayErr
		}
		if sleepErr := smithytime.SleepWithContext(ctx, delay); sleepErr != nil { // as the SDK's retry middleware waits
			return nil, &aws.RequestCanceledError{Err: sleepErr}
		}
	}
}

// skewThreshold is how far our signing time may be from the server's
// clock before a refused signature is put down to the clock (the SDK's
// threshold; S3 accepts signatures up to 15 minutes off).
const skewThreshold = 4 * time.Minute

// clockSkewCodes are the error codes a request signed at a wrong time gets.
var clockSkewCodes = []string{"RequestTimeTooSkewed", "SignatureDoesNotMatch", "InvalidSignatureException", "AuthFailure", "AccessDeniedException"}

// clockSkewed makes err retryable when its code says the signature was
// refused and the request was signed (at our time plus skew) more than
// skewThreshold away from the server's clock (our time plus serverSkew):
// the next attempt, signed at the server's time, can succeed.
func clockSkewed(err error, skew, serverSkew time.Duration) error {
	var api smithy.APIError
	if !errors.As(err, &api) || !slices.Contains(clockSkewCodes, api.ErrorCode()) {
		return err
	}
	if d := skew - serverSkew; d > skewThreshold || d < -skewThreshold {
		return &clockSkewError{err}
	}
	return err
}

// clockSkewError is an error the retryers retry (RetryableError).
type clockSkewError struct{ err error }

func (e *clockSkewError) Error() string        { return "clock skew: " + e.err.Error() }
func (e *clockSkewError) Unwrap() error        { return e.err }
func (e *clockSkewError) RetryableError() bool { return true }

// skewOf is the server's clock minus ours when resp was received at at,
// from its Date header; not known without one, for a cached response
// (Age) or after a request so slow that the Date says little.
func skewOf(resp *http.Response, sentAt, at time.Time) (time.Duration, bool) {
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil || resp.Header.Get("Age") != "" || at.Sub(sentAt) > 15*time.Minute {
		return 0, false
	}
	return date.Sub(at), true
}

// maxErrorBody bounds what is read of an error response (S3's are < 1 KiB).
const maxErrorBody = 64 << 10

// attempt signs r at our time plus skew and sends it once. It returns a
// 2xx response, or the error; and, when a response said, the server's
// clock minus ours.
func (c *s3Client) attempt(ctx context.Context, r s3Request, payloadHash string, skew time.Duration) (_ *http.Response, serverSkew time.Duration, known bool, _ error) {
	var creds aws.Credentials
	if c.creds != nil {
		var err error
		if creds, err = c.creds.Retrieve(ctx); err != nil {
			return nil, 0, false, fmt.Errorf("get identity: get credentials: %w", err)
		}
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.scheme+"://"+c.host, body)
	if err != nil {
		return nil, 0, false, err
	}
	rawPath := c.path + "/"
	if r.key != "" {
		rawPath += s3Escape(r.key, true)
	} else if c.path != "" {
		rawPath = c.path // the bucket itself: /bucket, or / when virtual
	}
	if req.URL.Path, err = url.PathUnescape(rawPath); err != nil {
		return nil, 0, false, err
	}
	req.URL.RawPath = rawPath
	req.URL.RawQuery = s3Query(r.query)
	for k, v := range r.header {
		req.Header[k] = v
	}
	req.ContentLength = int64(len(r.body))
	req.Header.Set("User-Agent", "slivingdoc")
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	if c.creds == nil {
		// No credential chain: an anonymous request, as the SDK sends.
	} else if err := c.signer.SignHTTP(ctx, creds, req, payloadHash, "s3", c.region, time.Now().Add(skew).UTC()); err != nil {
		return nil, 0, false, fmt.Errorf("sign: %w", err)
	}
	sentAt := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, false, &smithyhttp.RequestSendError{Err: err}
	}
	serverSkew, known = skewOf(resp, sentAt, time.Now())
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, serverSkew, known, nil
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return nil, serverSkew, known, responseError(resp, data)
}

// s3ErrorBody is S3's error document.
type s3ErrorBody struct {
	Code      string `xml:"Code"`
	Message   string `xml:"Message"`
	RequestID string `xml:"RequestId"`
}

// responseError is a non-2xx response as the SDK reports it: the status, the
// request ID and the S3 error code, which a HEAD response (no body) takes
// from its status ("NotFound", "Forbidden").
func responseError(resp *http.Response, data []byte) error {
	var e s3ErrorBody
	_ = xml.Unmarshal(data, &e)
	if e.Code == "" {
		e.Code = strings.ReplaceAll(http.StatusText(resp.StatusCode), " ", "")
		if e.Code == "" {
			e.Code = "UnknownError"
		}
	}
	if e.Message == "" {
		e.Message = e.Code
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Amz-Request-Id")
	}
	return &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: resp},
			Err:      &smithy.GenericAPIError{Code: e.Code, Message: e.Message},
		},
		RequestID: e.RequestID,
	}
}

// s3Escape percent-encodes s as S3 signs it: every byte but the unreserved
// characters (and '/' when keepSlash).
func s3Escape(s string, keepSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '/' && keepSlash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// s3Query encodes a query in name order, each part escaped as S3 signs it.
func s3Query(q map[string]string) string {
	if len(q) == 0 {
		return ""
	}
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(s3Escape(k, false))
		b.WriteByte('=')
		b.WriteString(s3Escape(q[k], false))
	}
	return b.String()
}

// get returns the object's body and ETag.
func (c *s3Client) get(ctx context.Context, key string) ([]byte, string, error) {
	resp, err := c.do(ctx, s3Request{op: "GetObject", method: http.MethodGet, key: key, retry: true})
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	return data, resp.Header.Get("ETag"), nil
}

// head returns the object's size and ETag.
func (c *s3Client) head(ctx context.Context, key string) (int64, string, error) {
	resp, err := c.do(ctx, s3Request{op: "HeadObject", method: http.MethodHead, key: key, retry: true})
	if err != nil {
		return 0, "", err
	}
	resp.Body.Close()
	size := resp.ContentLength
	if v := resp.Header.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			size = n
		}
	}
	return max(size, 0), resp.Header.Get("ETag"), nil
}

// put stores data with its SHA-256 (x-amz-checksum-sha256), which the
// server verifies before it stores anything; header adds the condition.
func (c *s3Client) put(ctx context.Context, key string, data []byte, header http.Header, retry bool) (string, error) {
	sum := sha256.Sum256(data)
	if header == nil {
		header = http.Header{}
	}
	header.Set("X-Amz-Checksum-Sha256", base64.StdEncoding.EncodeToString(sum[:]))
	header.Set("X-Amz-Sdk-Checksum-Algorithm", "SHA256")
	header.Set("Content-Type", "application/octet-stream") // what the SDK sent for a body without a type
	if data == nil {
		data = []byte{}
	}
	resp, err := c.do(ctx, s3Request{op: "PutObject", method: http.MethodPut, key: key, header: header, body: data, retry: retry})
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return resp.Header.Get("ETag"), nil
}

func (c *s3Client) delete(ctx context.Context, key string) error {
	resp, err := c.do(ctx, s3Request{op: "DeleteObject", method: http.MethodDelete, key: key, retry: true})
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	return resp.Body.Close()
}

// s3ListPage is one page of ListObjectsV2.
type s3ListPage struct {
	Contents              []s3ListEntry `xml:"Contents"`
	IsTruncated           bool          `xml:"IsTruncated"`
	NextContinuationToken string        `xml:"NextContinuationToken"`
}

// s3ListEntry is one object of a page.
type s3ListEntry struct {
	Key  string `xml:"Key"`
	Size int64  `xml:"Size"`
	ETag string `xml:"ETag"`
}

// maxListPage bounds what is read of one page (1,000 keys of up to 1 KiB).
const maxListPage = 16 << 20

// list calls each page of ListObjectsV2 for prefix, from after, with
// visit; it follows the continuation token while the result is truncated
// and the token changes, as the SDK's paginator does.
func (c *s3Client) list(ctx context.Context, prefix, after string, visit func(key string, size int64, etag string)) error {
	token := ""
	for {
		q := map[string]string{"list-type": "2", "prefix": prefix}
		if after != "" {
			q["start-after"] = after
		}
		if token != "" {
			q["continuation-token"] = token
		}
		resp, err := c.do(ctx, s3Request{op: "ListObjectsV2", method: http.MethodGet, query: q, retry: true})
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxListPage))
		resp.Body.Close()
		if err != nil {
			return err
		}
		page, err := decodeListPage(data)
		if err != nil {
			return &smithy.OperationError{ServiceID: "S3", OperationName: "ListObjectsV2",
				Err: &smithy.DeserializationError{Err: err}}
		}
		for _, o := range page.Contents {
			visit(o.Key, o.Size, o.ETag)
		}
		next := page.NextContinuationToken
		if !page.IsTruncated || next == "" || next == token {
			return nil
		}
		token = next
	}
}
