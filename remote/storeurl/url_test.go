package storeurl_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
	"github.com/slivingdoc/slivingdoc/remote/storeurl"
)

func TestOpenURLFile(t *testing.T) {
	dir := t.TempDir()
	s, err := storeurl.Open(context.Background(), "file://"+filepath.ToSlash(dir)+"/store", s3store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateIfAbsent(context.Background(), "current", []byte("x")); err != nil {
		t.Fatal(err)
	}
	again, err := filestore.New(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Identity() != s.Identity() {
		t.Fatalf("the URL and the path name different stores: %q vs %q", s.Identity(), again.Identity())
	}
	if data, _, err := again.Get(context.Background(), "current"); err != nil || string(data) != "x" {
		t.Fatalf("the URL opened another directory: %q, %v", data, err)
	}
}

func TestOpenURLRefused(t *testing.T) {
	for _, raw := range []string{
		"",
		"store",
		"file:relative/dir",
		"file://otherhost/dir",
		"http://example.com/bucket",
		"s3://",
		"s3://key:hunter2@bucket/prefix",
		"file:///dir?x=1",
		"s3://bucket/prefix#frag",
		"s3://bucket%zz/prefix",
	} {
		_, err := storeurl.Open(context.Background(), raw, s3store.Config{})
		if !errors.Is(err, remote.ErrStoreURL) {
			t.Errorf("OpenURL(%q) = %v, want ErrStoreURL", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("OpenURL(%q): the error repeats the password: %v", raw, err)
		}
	}
}

func TestOpenURLS3Dispatch(t *testing.T) {
	ctx := context.Background()
	cfg := s3store.Config{Bucket: "other", Prefix: "kept", Region: "us-east-1", Endpoint: "http://127.0.0.1:9", PathStyle: true}
	for raw, want := range map[string]string{
		"s3://notes/team/a": "s3://notes/team/a",
		"s3://notes":        "s3://notes/kept", // no prefix in the URL: the configured one
		"s3://notes/":       "s3://notes/kept",
	} {
		s, err := storeurl.Open(ctx, raw, cfg)
		if err != nil {
			t.Fatalf("OpenURL(%q): %v", raw, err)
		}
		if id := s.Identity(); !strings.HasPrefix(id, want+"?") && id != want {
			t.Errorf("OpenURL(%q).Identity() = %q, want bucket and prefix %q", raw, id, want)
		}
	}
}
