//go:build unix

package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// rowRetriesExhausted: a store that refuses writes as too frequent (HTTP
// 429, as R2 and GCS answer above about one write per second to a name).
// On `current` that is a lost race the commit backs off from and retries
// (server/ratelimit_test.go); on any other write the commit stops with
// REMOTE_BUSY · RETRIES_EXHAUSTED, nothing accepted, and a retry after
// the limit lifts is accepted. The store is SeaweedFS behind a proxy that
// answers 429 to every write but those of `current`: the file store never
// rate-limits.
func rowRetriesExhausted(t *testing.T, _ *notebook, row diag.CatalogRow) {
	env := seaweedStoreEnv(t)
	var limited atomic.Bool
	var refused atomic.Int32
	for i, kv := range env {
		if endpoint, ok := strings.CutPrefix(kv, "AWS_ENDPOINT_URL_S3="); ok {
			env[i] = "AWS_ENDPOINT_URL_S3=" + rateLimitingProxy(t, endpoint, &limited, &refused)
		}
	}
	nb := &notebook{t: t, bin: cliBinary(t), env: env, backend: "seaweedfs"}
	a := nb.agent("a")
	s := a.serve()
	s.pull()
	a.write("plan.md", "first\n")
	if r := s.call(ToolCommitName, map[string]any{"message": "seed"}); r.isError {
		t.Fatalf("seed: %s", r.text)
	}
	a.write("plan.md", "first\nsecond\n")
	limited.Store(true)
	wantRow(t, s.call(ToolCommitName, map[string]any{"message": "limited"}), row)
	if refused.Load() == 0 {
		t.Fatal("the proxy refused no write: the row came from elsewhere")
	}
	limited.Store(false)
	r := s.call(ToolCommitName, map[string]any{"message": "after the limit"})
	if r.isError || a.read("plan.md") != "first\nsecond\n" {
		t.Fatalf("the retry after the limit: %s", r.text)
	}
	if b := nb.agent("b"); b.pull().generation != 2 || b.read("plan.md") != "first\nsecond\n" {
		t.Fatal("the retry's text is not what another agent pulls")
	}
}

// rateLimitingProxy forwards to target, but while limited is set answers
// every PUT of a key other than `current` with S3's SlowDown (429).
func rateLimitingProxy(t *testing.T, target string, limited *atomic.Bool, refused *atomic.Int32) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if limited.Load() && req.Method == http.MethodPut && !strings.HasSuffix(req.URL.Path, "/"+remote.CurrentKey) {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`))
			return
		}
		forward.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
