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
