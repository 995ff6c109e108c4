//go:build unix

package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

func get(t *testing.T, url string) (string, error) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// The proxy relays requests; slow delays them; down refuses connections
// on the same address, as a stopped server would; up serves again there.
func TestFaultProxy(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello "+r.URL.Path)
	}))
	defer backend.Close()
	p, err := newFaultProxy(backend.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	if body, err := get(t, p.URL()+"/a"); err != nil || body != "hello /a" {
		t.Fatalf("relay: %q, %v", body, err)
	}
	if p.Delayed() != 0 {
		t.Fatalf("delayed %d chunks while not slow", p.Delayed())
	}

	p.SetSlow(300 * time.Millisecond)
	start := time.Now()
	for range 5 {
		if _, err := get(t, p.URL()+"/b"); err != nil {
			t.Fatal(err)
		}
	}
	p.SetSlow(0)
	if p.Delayed() < 5 {
		t.Fatalf("slow proxy delayed %d chunks of 5 requests", p.Delayed())
	}
	// Five requests with delays drawn from [0, 300 ms): a total under
	// 50 ms needs each under 50 ms, odds (1/6)^5.
	if time.Since(start) < 50*time.Millisecond {
		t.Fatalf("5 slow requests took %s", time.Since(start))
	}

	p.Down()
	_, err = net.DialTimeout("tcp", p.addr, time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial while down: %v, want connection refused", err)
	}
	if err := p.Up(); err != nil {
		t.Fatal(err)
	}
	if body, err := get(t, p.URL()+"/c"); err != nil || body != "hello /c" {
		t.Fatalf("relay after up: %q, %v", body, err)
	}
}

// With the backend gone while the proxy is up, a client gets a reset
// connection, never a hang.
func TestFaultProxyBackendGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, err := newFaultProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := get(t, p.URL()+"/x"); err == nil {
		t.Fatal("request through a proxy with no backend succeeded")
	}
	if p.refused.Load() == 0 {
		t.Fatal("the refused backend was not counted")
	}
}
