package main

import (
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// Issue 14, item 6: read-only S3 credentials can read. pull, status and
// log work with an identity that may only read and list (configured in
// the test's SeaweedFS); commit fails with ACCESS_DENIED, nothing
// published.
func TestCLIReadOnlyCredentialsCanRead(t *testing.T) {
	srv := seaweed.Shared(t)
	nb := &notebook{t: t, bin: cliBinary(t), env: seaweedStoreEnv(t), backend: "seaweedfs"}
	w := nb.agent("writer")
	w.pull()
	w.write("a.md", "written with full rights\n")
	w.commit("a")

	r := nb.agent("reader")
	var env []string
	for _, kv := range r.env {
		if !strings.HasPrefix(kv, "AWS_ACCESS_KEY_ID=") && !strings.HasPrefix(kv, "AWS_SECRET_ACCESS_KEY=") {
			env = append(env, kv)
		}
	}
	r.env = append(env, "AWS_ACCESS_KEY_ID="+srv.ReadOnlyAccessKey, "AWS_SECRET_ACCESS_KEY="+srv.ReadOnlySecretKey)
	r.pull()
	if got := r.read("a.md"); got != "written with full rights\n" {
		t.Fatalf("a.md = %q", got)
	}
	if o := r.run("status", r.dir); o.code != 0 {
		t.Fatalf("status with read-only credentials: %s", o)
	}
	if o := r.run("log"); o.code != 0 || !strings.Contains(o.stdout, "a") {
		t.Fatalf("log with read-only credentials: %s", o)
	}
	r.write("b.md", "refused\n")
	if rep := mustFail(t, r.run("commit", r.dir, "-m", "b")); rep.code != "STORAGE_FAILURE" || rep.reason != "ACCESS_DENIED" {
		t.Fatalf("commit with read-only credentials: %s · %s", rep.code, rep.reason)
	}
	w.pull()
	if _, ok := w.files()["b.md"]; ok {
		t.Fatal("a read-only commit was published")
	}
}
