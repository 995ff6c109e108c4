package server

import "sync"

// afterReply is the work an accepted commit of a long-lived engine
// (Config.LongLived: serve) leaves to finish after its reply: keeping the
// published pack in the object cache, recording the cache's reach and the
// highest generation seen. None of it decides anything the reply reports,
// and each is a cache or a safeguard that a crash may lose without harm
// (the next process downloads the pack; the generation memory is one
// generation behind, and the baseline records the generation anyway). A
// one-shot CLI process does this work before it returns instead, since it
// exits right after.
//
// The next call of the engine waits for it in begin, so a call never
// races the previous one's cache work, and Close waits for it too.
type afterReply struct {
	mu      sync.Mutex
	pending []chan struct{}
}

// slowAfterReply, set by tests, runs before each piece of such work.
var slowAfterReply func()

// start runs f on its own goroutine, as work to finish after the reply.
func (a *afterReply) start(f func()) {
	done := make(chan struct{})
	a.mu.Lock()
	a.pending = append(a.pending, done)
	a.mu.Unlock()
	go func() {
		defer close(done)
		if slowAfterReply != nil {
			slowAfterReply()
		}
		f()
	}()
}

// wait returns once all work started before it was called is done.
func (a *afterReply) wait() {
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
