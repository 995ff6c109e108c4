package s3store_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// timingTransport adds up the time requests spend in the HTTP transport
// (connection, server, response headers), so that a benchmark can tell the
// SDK's own cost per request from the server's.
type timingTransport struct {
	next  http.RoundTripper
	nanos atomic.Int64
	n     atomic.Int64
}

func (t *timingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	t.nanos.Add(int64(time.Since(start)))
	t.n.Add(1)
	return resp, err
}

// BenchmarkRequest: one small GET, PUT and conditional PUT through the
// store, against SeaweedFS, with the share of the time spent outside the
// SDK (wire-ms: transport round trip) reported beside the whole call.
func BenchmarkRequest(b *testing.B) {
	srv := seaweed.Shared(b)
	tt := &timingTransport{next: http.DefaultTransport}
	s := seaweedStore(b, srv, tt)
	ctx := context.Background()
	data := make([]byte, 2048)
	etag, err := s.CreateIfAbsent(ctx, "current", data)
	if err != nil {
		b.Fatal(err)
	}
	run := func(name string, op func() error) {
		b.Run(name, func(b *testing.B) {
			tt.nanos.Store(0)
			tt.n.Store(0)
			for b.Loop() {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tt.nanos.Load())/float64(b.N)/1e6, "wire-ms")
			b.ReportMetric(float64(tt.n.Load())/float64(b.N), "requests")
		})
	}
	run("get", func() error { _, _, err := s.Get(ctx, "current"); return err })
	run("put", func() error { return s.Put(ctx, "packs/x.pack", data) })
	run("replace", func() error {
		var err error
		etag, err = s.ReplaceIfMatch(ctx, "current", data, etag)
		return err
	})
}
