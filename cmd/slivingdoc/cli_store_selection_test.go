package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote/seaweed"
)

// On a fresh machine, with no store or private-root setting at all,
// `slivingdoc pull notes` works against the directory store under the user
// data dir, with private state under the user cache dir; a second
// directory of the same user shares the notebook.
func TestCLIEmbeddedDefault(t *testing.T) {
	home := t.TempDir()
	env := append(cleanEnv(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	nb := &notebook{t: t, bin: cliBinary(t)}
	a, b := nb.agent("a"), nb.agent("b")
	a.env, b.env = env, env

	o := a.run("pull", "notes") // relative to the working directory
	if r := mustOK(t, o); r.generation != 0 {
		t.Fatalf("pull on a fresh machine: %+v", r)
	}
	for _, p := range []string{filepath.Join(home, "data", "slivingdoc", "store"), filepath.Join(home, "cache", "slivingdoc")} {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", p, err)
		}
	}
	a.write("hello.md", "hi\n")
	mustOK(t, a.run("commit", "notes", "-m", "hello"))
	if r := b.pull(); r.generation != 1 || !maps.Equal(b.files(), a.files()) {
		t.Fatalf("second directory: %+v %q", r, b.files())
	}
}

// The store can be named by flag or by environment, as a URL or as bucket
// and prefix; all spellings of one store reach one notebook, and another
// prefix is another notebook.
func TestCLIStoreSpellings(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		store := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "store"))
		nb := &notebook{t: t, bin: cliBinary(t)}
		a, b := nb.agent("a"), nb.agent("b")
		mustOK(t, a.run("pull", a.dir, "--store", store))
		a.write("x.md", "x\n")
		mustOK(t, a.run("commit", a.dir, "-m", "x", "--store", store))
		b.env = append(b.env, "SLIVINGDOC_STORE="+store)
		if r := b.pull(); r.generation != 1 {
			t.Fatalf("env spelling: %+v", r)
		}
	})
	t.Run("seaweedfs", func(t *testing.T) {
		srv := seaweed.Shared(t)
		bucket := srv.NewBucket(t)
		nb := &notebook{t: t, bin: cliBinary(t), env: append(srv.Env(), "AWS_CONFIG_FILE="+devNull, "AWS_SHARED_CREDENTIALS_FILE="+devNull)}
		a, b, c := nb.agent("a"), nb.agent("b"), nb.agent("c")
		mustOK(t, a.run("pull", a.dir, "--store", "s3://"+bucket+"/team/notes", "--path-style"))
		a.write("x.md", "x\n")
		mustOK(t, a.run("commit", a.dir, "-m", "x", "--store", "s3://"+bucket+"/team/notes", "--path-style"))

		b.env = append(b.env, "SLIVINGDOC_BUCKET="+bucket, "SLIVINGDOC_PREFIX=team/notes", "SLIVINGDOC_PATH_STYLE=1")
		if r := b.pull(); r.generation != 1 || b.read("x.md") != "x\n" {
			t.Fatalf("bucket and prefix from the environment: %+v", r)
		}
		if r := mustOK(t, c.run("pull", c.dir, "--bucket", bucket, "--path-style")); r.generation != 0 {
			t.Fatalf("the default prefix is another notebook: %+v", r)
		}
		// Store errors are reports, not crashes: a bucket that does not exist.
		o := c.run("pull", c.dir, "--bucket", "no-such-"+strings.ToLower(bucket), "--path-style")
		if rep := mustFail(t, o); rep.code != "STORAGE_FAILURE" {
			t.Fatalf("missing bucket: %+v", rep)
		}
	})
}
