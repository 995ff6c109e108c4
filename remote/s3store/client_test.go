package s3store_test

// The S3 requests of client.go, where they differ from what the contract
// tests exercise: keys that need escaping (the server checks the signature
// over the path we send), the address of the bucket, pages of a listing,
// and the checksum a GET response carries.

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

// A GET whose body does not match the checksum the response carries is an
// error, not data; one that matches, or carries none, is read.
func TestS3GetChecksTheResponseChecksum(t *testing.T) {
	body := "the manifest"
	good := sha256.Sum256([]byte(body))
	bad := sha256.Sum256([]byte(body + "!"))
	for _, tc := range []struct {
		name, checksum string
		ok             bool
	}{
		{"matching", base64.StdEncoding.EncodeToString(good[:]), true},
		{"none", "", true},
		{"composite", base64.StdEncoding.EncodeToString(bad[:]) + "-2", true},
		{"mismatched", base64.StdEncoding.EncodeToString(bad[:]), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Amz-Checksum-Mode") != "ENABLED" {
					http.Error(w, "checksum mode not asked", http.StatusBadRequest)
					return
				}
				if tc.checksum != "" {
					w.Header().Set("X-Amz-Checksum-Sha256", tc.checksum)
				}
				w.Header().Set("ETag", `"e"`)
				fmt.Fprint(w, body)
			}))
			defer srv.Close()
			s := openS3(t, s3store.Config{Bucket: "b", Endpoint: srv.URL, PathStyle: true, AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "not-a-secret"})
			data, etag, err := s.Get(context.Background(), "current")
			if tc.ok {
				if err != nil || string(data) != body || etag != `"e"` {
					t.Fatalf("Get = %q, %q, %v", data, etag, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "checksum did not match") {
				t.Fatalf("Get of a body that fails its checksum = %q, %v", data, err)
			}
		})
	}
}
