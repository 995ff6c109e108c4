package s3store_test

// HTTP transports that script what happens to the S3 backend's requests:
// a canned response, a failure before anything is sent, a reply lost after
// the server applied the request, a body corrupted in transit.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// cannedTransport answers every request with status and, when code is set,
// an S3 XML error body. It never touches the network.
type cannedTransport struct {
	status int
	code   string
	calls  atomic.Int32
}

func (c *cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.calls.Add(1)
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	body := ""
	if c.code != "" && req.Method != http.MethodHead {
		body = fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>canned</Message><RequestId>req-1</RequestId></Error>`, c.code)
	}
	return &http.Response{
		StatusCode:    c.status,
		Status:        fmt.Sprintf("%d %s", c.status, http.StatusText(c.status)),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/xml"}, "X-Amz-Request-Id": {"req-1"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

var errInjected = errors.New("injected transport fault")

// faultMode is what faultTransport does to a matching request.
type faultMode int

const (
	failBeforeSend faultMode = iota // return an error without contacting the server
	dropReply                       // let the server apply the request, then lose its reply
	corruptBody                     // flip one byte of the request body on the wire
)

// faultTransport forwards requests to the real server and applies mode to
// the first `times` requests that match.
type faultTransport struct {
	base  http.RoundTripper
	mode  faultMode
	match func(*http.Request) bool
	mu    sync.Mutex
	times int
	fired int
}

func newFaultTransport(mode faultMode, times int, match func(*http.Request) bool) *faultTransport {
	return &faultTransport{base: http.DefaultTransport, mode: mode, match: match, times: times}
}

func (f *faultTransport) take(req *http.Request) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fired >= f.times || !f.match(req) {
		return false
	}
	f.fired++
	return true
}

// Fired reports how many requests the fault hit; a test whose fault never
// fired proves nothing.
func (f *faultTransport) Fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

func (f *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !f.take(req) {
		return f.base.RoundTrip(req)
	}
	switch f.mode {
	case failBeforeSend:
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errInjected
	case dropReply:
		resp, err := f.base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("reply to %s %s lost: %w", req.Method, req.URL.Path, errInjected)
	default: // corruptBody
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if len(data) > 0 {
			data[len(data)/2] ^= 0x01
		}
		out := req.Clone(req.Context())
		out.Body = io.NopCloser(bytes.NewReader(data))
		out.GetBody = nil
		return f.base.RoundTrip(out)
	}
}

// isConditionalPut matches PUTs carrying If-Match or If-None-Match to a key
// ending in suffix.
func isConditionalPut(suffix string) func(*http.Request) bool {
	return func(req *http.Request) bool {
		return req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/"+suffix) &&
			(req.Header.Get("If-Match") != "" || req.Header.Get("If-None-Match") != "")
	}
}

func isPut(req *http.Request) bool { return req.Method == http.MethodPut }
