package storeview

import "sync"

// AfterReply is the work an accepted commit of a long-lived engine
// (serve) leaves to finish after its reply: keeping the published pack
// in the object cache, recording the cache's reach and the highest
// generation seen. None of it decides anything the reply reports, and
// each is a cache or a safeguard that a crash may lose without harm (the
// next process downloads the pack; the generation memory is one
// generation behind, and the baseline records the generation anyway). A
// one-shot CLI process does this work before it returns instead, since it
// exits right after.
//
// With Hold set, work is held until Release (the transport has written
// a reply) so that it neither delays the reply nor competes with the
// call for the CPU; without it, Start starts the work at once.
//
// The engine's next call waits for it before it begins (Wait starts
// whatever is still held first), so a call never races the previous
// one's cache work, and closing the engine waits for it too. The zero
// value is ready to use.
type AfterReply struct {
	// Slow, set by tests before the first Start, runs before each piece
	// of such work.
	Slow func()
	// Hold, set before the first Start, holds work until Release or
	// Wait.
	Hold bool

	mu      sync.Mutex
	held    []func()
	pending []chan struct{}
}

// Start runs f on its own goroutine, as work to finish after the reply:
// at once, or with Hold at the next Release or Wait.
func (a *AfterReply) Start(f func()) {
	if a.Hold {
		a.mu.Lock()
		a.held = append(a.held, f)
		a.mu.Unlock()
		return
	}
	a.run(f)
}

// Release starts the work held so far (Hold): the reply it was left
// behind has been written, or another call's has.
func (a *AfterReply) Release() {
	a.mu.Lock()
	held := a.held
	a.held = nil
	a.mu.Unlock()
	for _, f := range held {
		a.run(f)
	}
}

func (a *AfterReply) run(f func()) {
	done := make(chan struct{})
	a.mu.Lock()
	a.pending = append(a.pending, done)
	a.mu.Unlock()
	go func() {
		defer close(done)
		if a.Slow != nil {
			a.Slow()
		}
		f()
	}()
}

// Wait returns once all work started or held before it was called is
// done.
func (a *AfterReply) Wait() {
	a.Release()
	a.mu.Lock()
	waiting := append([]chan struct{}(nil), a.pending...)
	a.mu.Unlock()
	if len(waiting) == 0 {
		return
	}
	for _, done := range waiting {
		<-done
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	kept := a.pending[:0]
	for _, done := range a.pending {
		select {
		case <-done:
		default:
			kept = append(kept, done)
		}
	}
	a.pending = kept
}
