package s3store_test

// The S3 requests of client.go, where they differ from what the contract
// tests exercise: keys that need escaping (the server checks the signature
// over the path we send), the address of the bucket, pages of a listing,
// the clock requests are signed at, and the requests as the SDK's S3 client
// sent them.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

// Keys with bytes that S3 wants percent-encoded, each written, read,
// listed and deleted on SeaweedFS, which refuses a request whose signature
// does not cover the path as it received it.
func TestS3KeysThatNeedEscaping(t *testing.T) {
	srv := seaweed.Shared(t)
	ctx := context.Background()
	s := seaweedStore(t, srv, nil)
	keys := []string{"packs/a b.pack", "packs/plus+and%percent.pack", "packs/é~ü (1).pack", "packs/semi;colon=eq&amp.pack", "packs/star*quote'.pack"}
	for _, k := range keys {
		if err := s.Put(ctx, k, []byte("data of "+k)); err != nil {
			t.Fatalf("Put %q: %v", k, err)
		}
		data, etag, err := s.Get(ctx, k)
		if err != nil || string(data) != "data of "+k || etag == "" {
			t.Fatalf("Get %q = %q, %q, %v", k, data, etag, err)
		}
		info, err := s.Head(ctx, k)
		if err != nil || info.Size != int64(len("data of "+k)) || info.ETag != etag {
			t.Fatalf("Head %q = %+v, %v; want size %d, ETag %s", k, info, err, len("data of "+k), etag)
		}
	}
	objs, err := s.List(ctx, "packs/")
	if err != nil || len(objs) != len(keys) {
		t.Fatalf("List = %v, %v; want the %d keys", objs, err, len(keys))
	}
	after, err := s.(remote.ListerAfter).ListAfter(ctx, "packs/", "packs/plus+and%percent.pack")
	if err != nil || len(after) != 3 || after[0].Key != "packs/semi;colon=eq&amp.pack" {
		t.Fatalf("ListAfter = %v, %v; want the 3 keys after it", after, err)
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatalf("Delete %q: %v", k, err)
		}
		if _, _, err := s.Get(ctx, k); !errors.Is(err, remote.ErrNotFound) {
			t.Fatalf("Get %q after Delete: %v, want ErrNotFound", k, err)
		}
	}
}

// requestRecorder answers 404 to every request and keeps its host and path.
type requestRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *requestRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.URL.Scheme+"://"+req.URL.Host+req.URL.EscapedPath())
	r.mu.Unlock()
	return &http.Response{StatusCode: 404, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// The bucket goes in the host name unless path style is asked for, the
// endpoint is an IP address, or the bucket cannot be a host name (over TLS,
// a dot); without an endpoint, AWS's regional one.
func TestS3BucketAddressing(t *testing.T) {
	for _, tc := range []struct {
		bucket, endpoint, region string
		pathStyle                bool
		want                     string
	}{
		{"notes", "http://s3.example.test:9000", "", false, "http://notes.s3.example.test:9000/nb/current"},
		{"notes", "http://s3.example.test:9000", "", true, "http://s3.example.test:9000/notes/nb/current"},
		{"notes", "http://127.0.0.1:9000", "", false, "http://127.0.0.1:9000/notes/nb/current"},
		{"notes", "https://gw.example.test/s3", "", false, "https://notes.gw.example.test/s3/nb/current"},
		{"my.notes", "https://s3.example.test", "", false, "https://s3.example.test/my.notes/nb/current"},
		{"my.notes", "http://s3.example.test", "", false, "http://my.notes.s3.example.test/nb/current"},
		{"Notes_1", "http://s3.example.test", "", false, "http://s3.example.test/Notes_1/nb/current"},
		{"notes", "", "eu-west-1", false, "https://notes.s3.eu-west-1.amazonaws.com/nb/current"},
		{"notes", "", "cn-north-1", true, "https://s3.cn-north-1.amazonaws.com.cn/notes/nb/current"},
	} {
		t.Run(tc.bucket+" "+tc.endpoint+tc.region, func(t *testing.T) {
			rec := &requestRecorder{}
			s := openS3(t, s3store.Config{Bucket: tc.bucket, Prefix: "nb", Endpoint: tc.endpoint, Region: tc.region, PathStyle: tc.pathStyle,
				AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "not-a-secret", Transport: rec})
			if _, err := s.Head(context.Background(), "current"); !errors.Is(err, remote.ErrNotFound) {
				t.Fatalf("Head: %v, want ErrNotFound", err)
			}
			if len(rec.seen) != 1 || rec.seen[0] != tc.want {
				t.Fatalf("sent %v, want %s", rec.seen, tc.want)
			}
		})
	}
}

// A listing longer than a page is followed page by page with the
// continuation token, StartAfter sent with each, and ends when a page is
// not truncated.
func TestS3ListFollowsPages(t *testing.T) {
	var mu sync.Mutex
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		queries = append(queries, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		if q.Get("list-type") != "2" || q.Get("prefix") != "nb/packs/" || q.Get("start-after") != "nb/packs/a" {
			http.Error(w, "unexpected query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		switch q.Get("continuation-token") {
		case "":
			fmt.Fprint(w, `<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t/1+=</NextContinuationToken>`+
				`<Contents><Key>nb/packs/b</Key><Size>3</Size><ETag>&quot;e-b&quot;</ETag></Contents></ListBucketResult>`)
		case "t/1+=":
			fmt.Fprint(w, `<ListBucketResult><IsTruncated>false</IsTruncated>`+
				`<Contents><Key>nb/packs/c</Key><Size>4</Size><ETag>&quot;e-c&quot;</ETag></Contents>`+
				`<Contents><Key>nb/other/x</Key><Size>1</Size><ETag>&quot;e-x&quot;</ETag></Contents></ListBucketResult>`)
		default:
			http.Error(w, "unexpected token", http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	s := openS3(t, s3store.Config{Bucket: "b", Prefix: "nb", Endpoint: srv.URL, PathStyle: true,
		AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "not-a-secret"})
	objs, err := s.(remote.ListerAfter).ListAfter(context.Background(), "packs/", "packs/a")
	if err != nil {
		t.Fatal(err)
	}
	want := []remote.ObjectInfo{{Key: "packs/b", Size: 3, ETag: `"e-b"`}, {Key: "packs/c", Size: 4, ETag: `"e-c"`}}
	if fmt.Sprint(objs) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want %v (a key outside the prefix dropped)", objs, want)
	}
	if len(queries) != 2 || !strings.HasPrefix(queries[0], "/b?") {
		t.Fatalf("requests %v, want two pages of bucket b", queries)
	}
}

// A machine whose clock is an hour off: S3 refuses its first signature
// (RequestTimeTooSkewed), the client learns the server's clock from the
// refusal's Date, and a read is retried signed at that time; a conditional
// write is not retried (it is sent once) but the next request is signed
// right.
func TestS3SignsAtTheServersClock(t *testing.T) {
	const ahead = time.Hour
	var mu sync.Mutex
	var refused, served int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().Add(ahead)
		w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
		signed, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
		mu.Lock()
		defer mu.Unlock()
		if err != nil || signed.Sub(now).Abs() > 15*time.Minute {
			refused++
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<Error><Code>RequestTimeTooSkewed</Code><Message>The difference between the request time and the current time is too large.</Message></Error>`)
			return
		}
		served++
		w.Header().Set("ETag", `"e"`)
		if r.Method == http.MethodGet {
			fmt.Fprint(w, "data")
		}
	}))
	defer srv.Close()
	counts := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return refused, served
	}
	cfg := s3store.Config{Bucket: "b", Endpoint: srv.URL, PathStyle: true, AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "not-a-secret"}
	ctx := context.Background()

	s := openS3(t, cfg)
	if data, _, err := s.Get(ctx, "current"); err != nil || string(data) != "data" {
		t.Fatalf("Get with a clock an hour behind: %q, %v", data, err)
	}
	if r, ok := counts(); r != 1 || ok != 1 {
		t.Fatalf("%d refused, %d served; want the first refused and its retry served", r, ok)
	}
	if _, err := s.CreateIfAbsent(ctx, "current", []byte("m")); err != nil {
		t.Fatalf("CreateIfAbsent once the clock is known: %v", err)
	}

	fresh := openS3(t, cfg)
	_, err := fresh.CreateIfAbsent(ctx, "current", []byte("m"))
	expectOnly(t, "CreateIfAbsent with a clock an hour behind", err, remote.ErrAccessDenied)
	if r, _ := counts(); r != 2 {
		t.Fatalf("%d refused requests, want 2: a conditional write is sent once", r)
	}
	if _, err := fresh.CreateIfAbsent(ctx, "current", []byte("m")); err != nil {
		t.Fatalf("CreateIfAbsent after the refusal taught the clock: %v", err)
	}
}

// wireRecorder keeps the first request's method, host, path as sent, query
// and headers, and answers 404.
type wireRecorder struct {
	mu  sync.Mutex
	req *http.Request
}

func (w *wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	w.mu.Lock()
	if w.req == nil {
		w.req = req.Clone(context.Background())
	}
	w.mu.Unlock()
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
	}
	return &http.Response{StatusCode: 404, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// The requests go out as the SDK's S3 client sends the same operations: the
// same path, escaped the same way (S3 signs the path as sent), the same
// query and the headers that carry the conditions and the checksum.
func TestS3RequestsAsTheSDKSendsThem(t *testing.T) {
	const key = "packs/a b+c%d~é (1);=&'*!.pack"
	sum := sha256.Sum256([]byte("x"))
	checksum := base64.StdEncoding.EncodeToString(sum[:])
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ours func(remote.Store)
		sdk  func(*s3.Client)
		// headers both must send with the same value
		headers []string
	}{
		{"GetObject", func(s remote.Store) { _, _, _ = s.Get(ctx, key) },
			func(c *s3.Client) {
				_, _ = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("notes"), Key: aws.String("nb/" + key)})
			}, nil},
		{"HeadObject", func(s remote.Store) { _, _ = s.Head(ctx, key) },
			func(c *s3.Client) {
				_, _ = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("notes"), Key: aws.String("nb/" + key)})
			}, nil},
		{"PutObject If-None-Match", func(s remote.Store) { _, _ = s.CreateIfAbsent(ctx, key, []byte("x")) },
			func(c *s3.Client) {
				_, _ = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("notes"), Key: aws.String("nb/" + key), Body: strings.NewReader("x"),
					ContentLength: aws.Int64(1), IfNoneMatch: aws.String("*"), ChecksumAlgorithm: s3types.ChecksumAlgorithmSha256, ChecksumSHA256: aws.String(checksum)})
			}, []string{"If-None-Match", "X-Amz-Checksum-Sha256", "X-Amz-Sdk-Checksum-Algorithm", "Content-Length", "Content-Type"}},
		{"PutObject If-Match", func(s remote.Store) { _, _ = s.ReplaceIfMatch(ctx, key, []byte("x"), `"e1"`) },
			func(c *s3.Client) {
				_, _ = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("notes"), Key: aws.String("nb/" + key), Body: strings.NewReader("x"),
					ContentLength: aws.Int64(1), IfMatch: aws.String(`"e1"`), ChecksumAlgorithm: s3types.ChecksumAlgorithmSha256, ChecksumSHA256: aws.String(checksum)})
			}, []string{"If-Match", "X-Amz-Checksum-Sha256", "Content-Length"}},
		{"DeleteObject", func(s remote.Store) { _ = s.Delete(ctx, key) },
			func(c *s3.Client) {
				_, _ = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("notes"), Key: aws.String("nb/" + key)})
			}, nil},
		{"ListObjectsV2", func(s remote.Store) { _, _ = s.(remote.ListerAfter).ListAfter(ctx, "packs/", key) },
			func(c *s3.Client) {
				_, _ = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("notes"), Prefix: aws.String("nb/packs/"), StartAfter: aws.String("nb/" + key)})
			}, nil},
	} {
		for _, pathStyle := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/pathStyle=%v", tc.name, pathStyle), func(t *testing.T) {
				ours, theirs := &wireRecorder{}, &wireRecorder{}
				tc.ours(openS3(t, s3store.Config{Bucket: "notes", Prefix: "nb", Endpoint: "http://s3.example.test:9000", PathStyle: pathStyle,
					AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "not-a-secret", Transport: ours}))
				// Built as the store built its client before it made its own requests.
				tc.sdk(s3.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "not-a-secret", ""),
					HTTPClient: &http.Client{Transport: theirs}, RetryMaxAttempts: 1}, func(o *s3.Options) {
					o.BaseEndpoint = aws.String("http://s3.example.test:9000")
					o.UsePathStyle = pathStyle
					o.DisableLogOutputChecksumValidationSkipped = true
				}))
				a, b := ours.req, theirs.req
				if a == nil || b == nil {
					t.Fatalf("a request is missing: ours %v, the SDK's %v", a != nil, b != nil)
				}
				if a.Method != b.Method || a.URL.Host != b.URL.Host || a.URL.EscapedPath() != b.URL.EscapedPath() {
					t.Fatalf("ours %s %s%s, the SDK's %s %s%s", a.Method, a.URL.Host, a.URL.EscapedPath(), b.Method, b.URL.Host, b.URL.EscapedPath())
				}
				qa, qb := a.URL.Query(), b.URL.Query()
				qb.Del("x-id") // the SDK names the operation in the query for its own logs
				if fmt.Sprint(qa) != fmt.Sprint(qb) {
					t.Fatalf("query: ours %v, the SDK's %v", qa, qb)
				}
				for _, h := range tc.headers {
					va, vb := headerValue(a.Header, h), headerValue(b.Header, h)
					if h == "Content-Length" {
						va, vb = fmt.Sprint(a.ContentLength), fmt.Sprint(b.ContentLength)
					}
					if va != vb || va == "" {
						t.Errorf("%s: ours %q, the SDK's %q", h, va, vb)
					}
				}
			})
		}
	}
}

// headerValue is h's value in hdr, whatever the case of its name there (the
// SDK sets some headers under their lower-case names).
func headerValue(hdr http.Header, h string) string {
	for k, v := range hdr {
		if strings.EqualFold(k, h) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}
