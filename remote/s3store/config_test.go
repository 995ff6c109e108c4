package s3store_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

func TestS3RefusesBadConfig(t *testing.T) {
	const secret = "s3cr3tPassw0rd"
	for _, tc := range []struct {
		name string
		cfg  s3store.Config
	}{
		{"no bucket", s3store.Config{}},
		{"bucket with a slash", s3store.Config{Bucket: "a/b"}},
		{"endpoint with user info", s3store.Config{Bucket: "b", Endpoint: "http://AKIDUSER:" + secret + "@127.0.0.1:9000"}},
		{"endpoint with user only", s3store.Config{Bucket: "b", Endpoint: "https://" + secret + "@s3.example.com"}},
		{"endpoint without scheme", s3store.Config{Bucket: "b", Endpoint: "s3.example.com"}},
		{"endpoint not http", s3store.Config{Bucket: "b", Endpoint: "ftp://s3.example.com"}},
		{"endpoint with query", s3store.Config{Bucket: "b", Endpoint: "http://s3.example.com/?x=1"}},
		{"prefix with dot segment", s3store.Config{Bucket: "b", Prefix: "team/../other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := s3store.New(context.Background(), tc.cfg)
			if !errors.Is(err, remote.ErrStoreURL) || s != nil {
				t.Fatalf("NewS3 = %v, %v; want ErrStoreURL", s, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error repeats a credential: %v", err)
			}
		})
	}
}

func TestS3Identity(t *testing.T) {
	ctx := context.Background()
	identity := func(cfg s3store.Config) string {
		t.Helper()
		s, err := s3store.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s.Identity()
	}
	base := s3store.Config{Bucket: "notes", Prefix: "team/nb", Region: "eu-west-1", Endpoint: "http://127.0.0.1:8333",
		PathStyle: true, AccessKeyID: "AKIDIDENTITY", SecretAccessKey: "identity-secret"}
	id := identity(base)
	for _, leak := range []string{base.AccessKeyID, base.SecretAccessKey} {
		if strings.Contains(id, leak) {
			t.Fatalf("Identity %q carries a credential", id)
		}
	}
	if !strings.HasPrefix(id, "s3://notes/team/nb") {
		t.Fatalf("Identity %q does not name bucket and prefix", id)
	}

	// Stable across openings (another process opens the same store) and
	// blind to what does not change the objects: slashes around the prefix,
	// region, credentials, a trailing slash on the endpoint.
	same := base
	same.Prefix, same.Region, same.Endpoint = "/team/nb/", "us-east-1", "http://127.0.0.1:8333/"
	same.AccessKeyID, same.SecretAccessKey = "AKIDOTHER", "other-secret"
	if got := identity(same); got != id {
		t.Fatalf("the same store has two identities: %q and %q", id, got)
	}
	// Different objects, different identity.
	for name, edit := range map[string]func(*s3store.Config){
		"bucket":   func(c *s3store.Config) { c.Bucket = "other" },
		"prefix":   func(c *s3store.Config) { c.Prefix = "team/nb2" },
		"endpoint": func(c *s3store.Config) { c.Endpoint = "http://127.0.0.1:9000" },
		"aws":      func(c *s3store.Config) { c.Endpoint = "" },
	} {
		other := base
		edit(&other)
		if got := identity(other); got == id {
			t.Fatalf("changing the %s kept the identity %q", name, id)
		}
	}
}

// The store's keys live under its prefix in the bucket, and objects outside
// the prefix (another notebook) are invisible to it.
func TestS3KeysUnderPrefix(t *testing.T) {
	srv := seaweed.Shared(t)
	ctx := context.Background()
	cfg := seaweedConfig(srv)
	cfg.Prefix = "/team-" + remote.NewUUIDv7() + "/nb/"
	s := openS3(t, cfg)
	if err := s.Put(ctx, "packs/increments/p.pack", []byte("pack")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateIfAbsent(ctx, remote.CurrentKey, []byte("m")); err != nil {
		t.Fatal(err)
	}
	prefix := strings.Trim(cfg.Prefix, "/") + "/"
	raw := srv.Client()
	neighbour := strings.TrimSuffix(prefix, "nb/") + "nb2/current"
	if _, err := raw.PutObject(ctx, &s3.PutObjectInput{Bucket: &cfg.Bucket, Key: &neighbour, Body: strings.NewReader("other")}); err != nil {
		t.Fatal(err)
	}

	out, err := raw.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &cfg.Bucket, Prefix: aws.String(strings.TrimSuffix(prefix, "nb/"))})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	want := []string{prefix + "current", neighbour, prefix + "packs/increments/p.pack"}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Fatalf("bucket holds %v, want %v", keys, want)
	}
	got, err := raw.GetObject(ctx, &s3.GetObjectInput{Bucket: &cfg.Bucket, Key: aws.String(prefix + "current")})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	if data, _ := io.ReadAll(got.Body); string(data) != "m" {
		t.Fatalf("raw current = %q", data)
	}
	objs, err := s.List(ctx, "")
	if err != nil || len(objs) != 2 || objs[0].Key != "current" || objs[1].Key != "packs/increments/p.pack" {
		t.Fatalf("the store lists %v, %v; want only its own two keys, relative", objs, err)
	}
}

// An endpoint from the AWS configuration (here AWS_ENDPOINT_URL_S3) obeys
// the same rules as one given explicitly, and names the store as well.
func TestS3EndpointFromAWSConfiguration(t *testing.T) {
	ctx := context.Background()
	cfg := s3store.Config{Bucket: "notes", Prefix: "nb", AccessKeyID: "AKIDENV", SecretAccessKey: "env-secret"}
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	plain := openS3(t, cfg).Identity()

	t.Setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000")
	if got := openS3(t, cfg).Identity(); got == plain || !strings.Contains(got, "127.0.0.1") {
		t.Fatalf("identity %q ignores the configured endpoint (AWS: %q)", got, plain)
	}

	t.Setenv("AWS_ENDPOINT_URL_S3", "http://AKIDUSER:s3cr3t@127.0.0.1:9000")
	_, err := s3store.New(ctx, cfg)
	if !errors.Is(err, remote.ErrStoreURL) || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("NewS3 with user info in AWS_ENDPOINT_URL_S3 = %v, want ErrStoreURL without the secret", err)
	}
}
