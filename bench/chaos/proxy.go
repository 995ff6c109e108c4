//go:build unix

package main

import (
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// faultProxy is a TCP relay on 127.0.0.1 in front of the S3 server. The
// writers' endpoint is the proxy, always (the endpoint is part of the store
// identity, so it cannot change between operations), and the proxy gives
// the campaign two faults without touching the server:
//
//	slow   every chunk a client sends waits a random delay before it is
//	       relayed, so each request (and each retry) is late
//	down   the listener is closed: new connections are refused, as by a
//	       stopped server, and open ones are reset
//
// It relays bytes, not HTTP, so the signed Host header and bodies pass
// untouched.
type faultProxy struct {
	target string

	mu    sync.Mutex
	addr  string // fixed for the proxy's life: it is the writers' endpoint
	ln    net.Listener
	conns map[net.Conn]struct{}

	slowMax atomic.Int64 // max delay per chunk in ns; 0 = not slow
	delayed atomic.Int64 // chunks delayed so far (evidence the slow fault fired)
	refused atomic.Int64 // connections the backend refused while up
	wg      sync.WaitGroup
}

func newFaultProxy(target string) (*faultProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &faultProxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	return p, nil
}

// URL is the endpoint writers use.
func (p *faultProxy) URL() string { return "http://" + p.addr }

func (p *faultProxy) serve(ln net.Listener) {
	p.ln = ln
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.relay(c) }()
		}
	}()
}

// SetSlow makes every relayed client chunk wait up to max (0: no delay).
func (p *faultProxy) SetSlow(max time.Duration) { p.slowMax.Store(int64(max)) }

// Delayed is the number of chunks delayed so far.
func (p *faultProxy) Delayed() int64 { return p.delayed.Load() }

// Down closes the listener (new connections are refused) and resets every
// open connection.
func (p *faultProxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return
	}
	_ = p.ln.Close()
	p.ln = nil
	for c := range p.conns {
		reset(c)
	}
}

// Up listens again on the same address. Another process may have taken the
// port meanwhile; retry briefly, as a restarting server would.
func (p *faultProxy) Up() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil
	}
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.serve(ln)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// Close stops the proxy and waits for its relays.
func (p *faultProxy) Close() {
	p.Down()
	p.wg.Wait()
}

func (p *faultProxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on && p.ln == nil {
		return false // went down between accept and here
	}
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *faultProxy) relay(client net.Conn) {
	if !p.track(client, true) {
		reset(client)
		return
	}
	defer p.track(client, false)
	defer client.Close()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		// The backend itself is down (a restart in progress): as good as
		// refused for the client.
		p.refused.Add(1)
		reset(client)
		return
	}
	if !p.track(server, true) {
		reset(server)
		return
	}
	defer p.track(server, false)
	defer server.Close()
	done := make(chan struct{}, 2)
	go func() { p.copySlow(server, client); closeWrite(server); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, server); closeWrite(client); done <- struct{}{} }()
	<-done
	<-done
}

// copySlow relays client bytes to the server, delaying each chunk while
// the proxy is slow.
func (p *faultProxy) copySlow(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if max := p.slowMax.Load(); max > 0 {
				time.Sleep(time.Duration(rand.Int64N(max)))
				p.delayed.Add(1)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// reset closes c with RST rather than FIN, as a crashed peer would.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
