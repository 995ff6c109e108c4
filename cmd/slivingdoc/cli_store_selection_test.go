package main

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// On a fresh machine, with no store or private-root setting at all,
// `slivingdoc pull notes` works against the directory store under the user
// data dir, with private state under the user state dir (cleaners empty
// the cache dir); a second directory of the same user shares the notebook.
func TestCLIEmbeddedDefault(t *testing.T) {
	home := t.TempDir()
	env := append(cleanEnv(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	nb := &notebook{t: t, bin: cliBinary(t)}
	a, b := nb.agent("a"), nb.agent("b")
	a.env, b.env = env, env

	o := a.run("pull", "notes") // relative to the working directory
	if r := mustOK(t, o); r.generation != 0 {
		t.Fatalf("pull on a fresh machine: %+v", r)
	}
	for _, p := range []string{filepath.Join(home, "data", "slivingdoc", "store"), filepath.Join(home, "state", "slivingdoc", "dirs")} {
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

// A private root that an earlier version kept in the user cache dir is
// moved to the state dir once: the directory pulled then keeps its record
// (a commit needs no new pull, and nothing becomes a conflict).
func TestCLIPrivateRootMovesFromTheCacheDir(t *testing.T) {
	home := t.TempDir()
	base := append(cleanEnv(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	nb := &notebook{t: t, bin: cliBinary(t)}
	a := nb.agent("a")
	old := filepath.Join(home, "cache", "slivingdoc")
	a.env = append(base, "SLIVINGDOC_PRIVATE_ROOT="+old) // where earlier versions put it
	a.pull()
	a.write("n.md", "one\n")
	a.commit("one")
	a.env = append(base, "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	a.write("n.md", "one\ntwo\n")
	if r := a.commit("two"); r.generation != 2 {
		t.Fatalf("commit after the move: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(home, "state", "slivingdoc", "dirs")); err != nil {
		t.Fatalf("the private root was not moved: %v", err)
	}
	if _, err := os.Stat(filepath.Join(old, "dirs")); !os.IsNotExist(err) {
		t.Fatalf("the old private root's records are still there: %v", err)
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
		// Store failures are reports that keep local work: credentials the
		// store refuses (the read-only identity), and a store that does not
		// answer. (SeaweedFS creates a missing bucket on the first PUT, so
		// a missing bucket cannot be shown here.)
		b.write("x.md", "x\nlocal edit\n")
		ro := []string{"AWS_ACCESS_KEY_ID=" + srv.ReadOnlyAccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.ReadOnlySecretKey}
		rep := mustFail(t, b.runEnv(ro, "commit", b.dir, "-m", "refused"))
		if rep.code != "STORAGE_FAILURE" || rep.reason != "ACCESS_DENIED" || rep.action != "CHECK_STORE" || rep.retryable {
			t.Fatalf("read-only credentials: %+v", rep)
		}
		rep = mustFail(t, b.run("commit", b.dir, "-m", "unreachable", "--endpoint", "http://127.0.0.1:1"))
		if rep.code != "STORAGE_FAILURE" || rep.reason != "STORE_UNREACHABLE" || rep.action != "RETRY" || !rep.retryable {
			t.Fatalf("unreachable store: %+v", rep)
		}
		if got := b.read("x.md"); got != "x\nlocal edit\n" {
			t.Fatalf("local edit lost: %q", got)
		}
		if r := b.pull(); r.generation != 1 {
			t.Fatalf("something was published: %+v", r)
		}
	})
}
