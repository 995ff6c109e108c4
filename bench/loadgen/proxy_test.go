package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// The proxy counts requests and body bytes per operation class and hands
// the request to the server with the Host the client signed (SigV4 signs
// it; a rewritten Host would fail every request on a real server).
func TestCountingProxy(t *testing.T) {
	var hosts []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte("manifest-bytes"))
		}
	}))
	defer backend.Close()
	p, err := newCountingProxy(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()

	do := func(method, path string, body string, header ...string) {
		t.Helper()
		req, err := http.NewRequest(method, p.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do("GET", "/bucket/nb/current", "")
	do("PUT", "/bucket/nb/packs/increments/7-abc.pack", strings.Repeat("p", 1000))
	do("PUT", "/bucket/nb/current", strings.Repeat("m", 300), "If-Match", `"etag"`)
	do("GET", "/bucket?list-type=2&prefix=nb/", "")

	got := p.take()
	want := []OpCount{
		{Class: "GET current", Requests: 1, BytesDn: int64(len("manifest-bytes"))},
		{Class: "LIST", Requests: 1, BytesDn: int64(len("manifest-bytes"))},
		{Class: "PUT if-match current", Requests: 1, BytesUp: 300},
		{Class: "PUT packs/increments", Requests: 1, BytesUp: 1000},
	}
	for i := range got {
		if got[i].Time.N != got[i].Requests || got[i].Statuses[http.StatusOK] != got[i].Requests {
			t.Fatalf("%s: %d timings, statuses %v for %d requests", got[i].Class, got[i].Time.N, got[i].Statuses, got[i].Requests)
		}
		got[i].Time, got[i].Statuses = Dist{}, nil
	}
	if !slices.EqualFunc(got, want, func(a, b OpCount) bool {
		return a.Class == b.Class && a.Requests == b.Requests && a.BytesUp == b.BytesUp && a.BytesDn == b.BytesDn
	}) {
		t.Fatalf("counts\n got %+v\nwant %+v", got, want)
	}
	if again := p.take(); len(again) != 0 {
		t.Fatalf("take did not reset: %+v", again)
	}
	proxyHost := strings.TrimPrefix(p.URL, "http://")
	for _, h := range hosts {
		if h != proxyHost {
			t.Fatalf("backend saw Host %q, want the signed %q", h, proxyHost)
		}
	}
}
