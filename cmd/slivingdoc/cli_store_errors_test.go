//go:build unix

package main

// Store errors that say what happened, through the binary against
// SeaweedFS: a store answering 500 to every request makes read-only
// commands report STORE_UNREACHABLE (never ACCEPTANCE_UNKNOWN: nothing was
// published), and missing AWS credentials are NO_CREDENTIALS with the
// variables and files to set (never "unreachable, retry later").

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

func init() {
	rowTests["STORAGE_FAILURE/NO_CREDENTIALS"] = rowNoCredentials
}

// failingProxy forwards to SeaweedFS until fail is set, then answers every
// request with 500 InternalError, as an S3 service in trouble does.
type failingProxy struct {
	fail atomic.Bool
	url  string
}

func newFailingProxy(t *testing.T, endpoint string) *failingProxy {
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &failingProxy{}
	// The Host header is kept as the client sent it: SigV4 signed it.
	forward := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.fail.Load() {
			forward.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		if r.Method != http.MethodHead {
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>`))
		}
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func TestCLIReadOnlyCommandsOnFailingStore(t *testing.T) {
	srv := seaweed.Shared(t)
	proxy := newFailingProxy(t, srv.Endpoint)
	env := append(srv.Env(), "SLIVINGDOC_BUCKET="+srv.NewBucket(t), "SLIVINGDOC_PATH_STYLE=true",
		"AWS_CONFIG_FILE="+devNull, "AWS_SHARED_CREDENTIALS_FILE="+devNull,
		"AWS_ENDPOINT_URL_S3="+proxy.url,
		// One attempt per request: the SDK's backoff between retries of
		// a 500 would only make the test slower.
		"AWS_MAX_ATTEMPTS=1")
	nb := &notebook{t: t, bin: cliBinary(t), env: env, backend: "seaweedfs"}
	a := nb.agent("a")
	a.pull()
	a.write("notes.md", "one\n")
	a.commit("one")
	a.write("notes.md", "one\ntwo\n")
	a.commit("two")
	a.write("notes.md", "one\ntwo\nlocal\n")

	proxy.fail.Store(true)
	// The first command fails on a read with the probe's verdict cached;
	// that failure drops the verdict, so every later one proves the store
	// again first and fails on the probe's write.
	for _, args := range [][]string{
		{"status", a.dir}, {"status", a.dir}, {"pull", a.dir}, {"log"}, {"log", "-p"},
		{"show", "2"}, {"show", "1:notes.md"}, {"diff", "1"}, {"diff", "1", "2"},
	} {
		o := a.run(args...)
		rep := mustFail(t, o)
		if rep.code != "STORAGE_FAILURE" || rep.reason != "STORE_UNREACHABLE" || rep.action != "RETRY" || !rep.retryable {
			t.Fatalf("%v on a store answering 500: %+v\n%s", args, rep, o)
		}
	}
	proxy.fail.Store(false)
	if got := a.read("notes.md"); got != "one\ntwo\nlocal\n" {
		t.Fatalf("the local edit became %q", got)
	}
	if r := a.pull(); r.generation != 2 {
		t.Fatalf("generation %d after the outage, want 2", r.generation)
	}
}

// noCredentialsNotebook is a SeaweedFS notebook whose agents have no AWS
// credentials anywhere: none in the environment (the empty values also
// keep the MCP harness from planting its own), empty shared files, no
// instance metadata.
func noCredentialsNotebook(t *testing.T) *notebook {
	srv := seaweed.Shared(t)
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"AWS_REGION=" + srv.Region, "AWS_ENDPOINT_URL_S3=" + srv.Endpoint, "AWS_EC2_METADATA_DISABLED=true",
		"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=",
		"AWS_CONFIG_FILE=" + empty, "AWS_SHARED_CREDENTIALS_FILE=" + empty,
		"SLIVINGDOC_BUCKET=" + srv.NewBucket(t), "SLIVINGDOC_PATH_STYLE=true"}
	return &notebook{t: t, bin: cliBinary(t), env: env, backend: "seaweedfs"}
}

// Without credentials every command says so, names what to set, and is not
// retryable; nothing in the directory changes.
func TestCLINoCredentials(t *testing.T) {
	nb := noCredentialsNotebook(t)
	a := nb.agent("a")
	a.write("notes.md", "mine\n")
	for _, args := range [][]string{{"pull", a.dir}, {"status", a.dir}, {"commit", a.dir, "-m", "x"}, {"log"}, {"show", "1"}} {
		o := a.run(args...)
		rep := mustFail(t, o)
		if rep.code != "STORAGE_FAILURE" || rep.reason != "NO_CREDENTIALS" || rep.action != "CHECK_STORE" || rep.retryable {
			t.Fatalf("%v without credentials: %+v\n%s", args, rep, o)
		}
		for _, want := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "~/.aws/credentials"} {
			if !strings.Contains(o.stdout, want) {
				t.Fatalf("%v: the report does not name %s:\n%s", args, want, o)
			}
		}
		if strings.Contains(strings.ToLower(o.stdout), "retry later") {
			t.Fatalf("%v: the report says to retry:\n%s", args, o)
		}
	}
	if got := a.files(); len(got) != 1 || got["notes.md"] != "mine\n" {
		t.Fatalf("the directory changed: %v", got)
	}
}

func rowNoCredentials(t *testing.T, _ *notebook, row diag.CatalogRow) {
	s := noCredentialsNotebook(t).agent("a").serve()
	r := s.call(ToolPullName, map[string]any{})
	wantRow(t, r, row)
	wantNoFiles(t, r)
}
