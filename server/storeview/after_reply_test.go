package storeview

import (
	"sync/atomic"
	"testing"
)

// Wait returns only once every piece of work started before it is done,
// and forgets finished work, so a later Wait with nothing started
// returns at once.
func TestAfterReplyWaitsForWorkStartedBefore(t *testing.T) {
	var a AfterReply
	release := make(chan struct{})
	var done atomic.Int32
	for range 3 {
		a.Start(func() {
			<-release
			done.Add(1)
		})
	}
	close(release)
	a.Wait()
	if got := done.Load(); got != 3 {
		t.Fatalf("Wait returned with %d of 3 pieces done", got)
	}
	a.Wait()
	a.mu.Lock()
	left := len(a.pending)
	a.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d finished pieces still pending", left)
	}
}

// With Hold, nothing starts before Release or Wait: the reply is written
// first. Release starts what was held; Wait starts and waits for
// whatever was not released.
func TestAfterReplyHoldsWorkUntilTheReply(t *testing.T) {
	a := AfterReply{Hold: true}
	var ran atomic.Int32
	a.Start(func() { ran.Add(1) })
	a.Start(func() { ran.Add(1) })
	a.mu.Lock()
	started := len(a.pending)
	a.mu.Unlock()
	if started != 0 || ran.Load() != 0 {
		t.Fatalf("held work started before the reply: %d started, %d ran", started, ran.Load())
	}
	a.Release()
	a.Wait()
	if got := ran.Load(); got != 2 {
		t.Fatalf("after Release and Wait %d of 2 pieces ran", got)
	}
	a.Start(func() { ran.Add(1) }) // no Release: the next call's Wait starts it
	a.Wait()
	if got := ran.Load(); got != 3 {
		t.Fatalf("Wait returned with %d of 3 pieces run", got)
	}
}
