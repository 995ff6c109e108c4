package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// countingProxy is a reverse proxy on 127.0.0.1 in front of SeaweedFS that
// counts requests and bytes by operation class ("PUT current",
// "GET packs/increments", "LIST", ...). The Host header is passed through
// unchanged: SigV4 signs it, so the server must see the one the client
// signed.
type countingProxy struct {
	URL string
	srv *http.Server
	ln  net.Listener

	mu     sync.Mutex
	counts map[string]*OpCount
	times  map[string][]time.Duration
}

// OpCount is the traffic of one operation class.
type OpCount struct {
	Class    string
	Requests int
	BytesUp  int64 // request bodies
	BytesDn  int64 // response bodies
	Statuses map[int]int
	Time     Dist // request to end of response, as the client sees it (+ the proxy)
}

func newCountingProxy(target string) (*countingProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{URL: "http://" + ln.Addr().String(), ln: ln, counts: map[string]*OpCount{}, times: map[string][]time.Duration{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
		},
		// Idle connections kept for every writer at once: the default
		// transport keeps two, so with tens of writers nearly every
		// request dialled SeaweedFS afresh (the dials were 4.5% of this
		// process's CPU in the 10-writer serve row).
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 1024,
			IdleConnTimeout:     90 * time.Second,
		},
		// A request the client abandons (its own timeout) is counted as
		// the 502 the proxy answers; one log line each would drown the
		// progress output.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := &countingReader{r: r.Body}
		r.Body = body
		cw := &countingWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		rp.ServeHTTP(cw, r)
		p.add(classify(r), body.n, cw.n, cw.status, time.Since(start))
	})}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *countingProxy) close() { _ = p.srv.Close() }

func (p *countingProxy) add(class string, up, dn int64, status int, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts[class]
	if c == nil {
		c = &OpCount{Class: class, Statuses: map[int]int{}}
		p.counts[class] = c
	}
	c.Requests++
	c.BytesUp += up
	c.BytesDn += dn
	c.Statuses[status]++
	p.times[class] = append(p.times[class], d)
}

// take returns the counts since the last take, sorted by class, and resets
// them. Callers run one process at a time between takes.
func (p *countingProxy) take() []OpCount {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]OpCount, 0, len(p.counts))
	for class, c := range p.counts {
		c.Time = summarize(p.times[class])
		out = append(out, *c)
	}
	p.counts, p.times = map[string]*OpCount{}, map[string][]time.Duration{}
	slices.SortFunc(out, func(a, b OpCount) int { return strings.Compare(a.Class, b.Class) })
	return out
}

// classify names a path-style S3 request /<bucket>/<prefix>/<key> by its
// method and key class; a conditional write says so.
func classify(r *http.Request) string {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	method := r.Method
	if r.URL.Query().Has("list-type") || (r.Method == http.MethodGet && len(parts) < 3) {
		return "LIST"
	}
	if len(parts) < 3 {
		return method + " (bucket)"
	}
	key := parts[2]
	class := key
	switch {
	case strings.HasPrefix(key, "packs/increments/"):
		class = "packs/increments"
	case strings.HasPrefix(key, "packs/checkpoints/"):
		class = "packs/checkpoints"
	case strings.HasPrefix(key, "packs/rollups/"):
		class = "packs/rollups"
	case strings.HasPrefix(key, "packs/groups/"):
		class = "packs/groups" // format 4's group packs
	case strings.HasPrefix(key, "index/"):
		class = "index" // format 2's segments
	case strings.HasPrefix(key, "proposals/") && strings.Contains(key, ".fold."):
		// Format 4's fold markers: empty objects a folder writes, apart
		// from the proposals (each commit's own pack) they name.
		class = "proposals fold markers"
	case registeredDescriptor(key):
		// Rollup and checkpoint descriptors: counted apart from the
		// commits' own proposals, as rollups are.
		class = "proposals registered"
	case strings.HasPrefix(key, "proposals/"):
		class = "proposals"
	case strings.HasPrefix(key, "probe/"):
		class = "probe"
	}
	switch {
	case r.Header.Get("If-Match") != "":
		method += " if-match"
	case r.Header.Get("If-None-Match") != "":
		method += " if-none-match"
	}
	return method + " " + class
}

type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

type countingWriter struct {
	http.ResponseWriter
	n      int64
	status int
}

func (c *countingWriter) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// Flush keeps streamed responses streaming through the proxy.
func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
