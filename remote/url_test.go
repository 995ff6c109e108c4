package remote_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

func TestOpenURLFile(t *testing.T) {
	dir := t.TempDir()
	s, err := remote.OpenURL(context.Background(), "file://"+filepath.ToSlash(dir)+"/store", remote.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateIfAbsent(context.Background(), "current", []byte("x")); err != nil {
		t.Fatal(err)
	}
	again, err := remote.NewFile(filepath.Join(dir, "store"))
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
		_, err := remote.OpenURL(context.Background(), raw, remote.S3Config{})
		if !errors.Is(err, remote.ErrStoreURL) {
			t.Errorf("OpenURL(%q) = %v, want ErrStoreURL", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("OpenURL(%q): the error repeats the password: %v", raw, err)
		}
	}
}
