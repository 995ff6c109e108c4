package cas

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// cachedHandles counts the handles every packFiles of the process keeps,
// liveStores the packFiles not closed.
var cachedHandles, liveStores atomic.Int64

// handleBudget is a variable so that tests can lower it; its value, a
// function declared below, is static data.
var handleBudget = openHandleBudget

func openHandleBudget() int64 {
	return handleBudgetOnce.Get(func() int64 { return max(int64(openFileLimit()/2), 64) })
}

var handleBudgetOnce noinit.Lazy[int64]

// packFiles keeps open handles to the most recently read files so that a
// Get costs one pread instead of open, pread and close. It holds at most
// maxOpen handles; past that, the least recently used idle one is closed,
// and if none is idle the read uses a handle of its own.
//
// The handles of all stores of a process together stay within
// handleBudget (half the open-file limit): a process holding many stores
// (serve with many engines, the fleet simulation's 1,000) would otherwise
// keep 64 per store and run out of file descriptors. Each store keeps at
// most its share of the budget (at least 4), so stores opened early do
// not hold it all, and past the budget a store evicts its own idle handle
// or reads with a handle of its own.
//
// On Windows no handle is kept: an open file there cannot be removed or
// replaced by another process, and the store promises that it can.
type packFiles struct {
	mu      sync.Mutex
	maxOpen int
	closed  bool
	tick    uint64
	open    map[*storedFile]*packHandle
}

type packHandle struct {
	f       *os.File
	refs    int    // reads in flight
	lastUse uint64 // packFiles.tick at the last acquire
	dropped bool   // no longer cached: close when refs reaches 0
}

func newPackFiles() *packFiles {
	n := 64
	if runtime.GOOS == "windows" {
		n = 0
	}
	liveStores.Add(1)
	return &packFiles{maxOpen: n, open: make(map[*storedFile]*packHandle)}
}

// limit is the most handles pf keeps now: its share of the process's
// budget, within maxOpen.
func (pf *packFiles) limit() int {
	share := handleBudget() / max(liveStores.Load(), 1)
	return int(min(int64(pf.maxOpen), max(share, 4)))
}

// acquire returns an open handle for p; the caller must release it.
func (pf *packFiles) acquire(p *storedFile, path string) (*packHandle, error) {
	pf.mu.Lock()
	if h := pf.open[p]; h != nil {
		pf.tick++
		h.refs++
		h.lastUse = pf.tick
		pf.mu.Unlock()
		return h, nil
	}
	pf.mu.Unlock()

	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	h := &packHandle{f: f, refs: 1}

	pf.mu.Lock()
	defer pf.mu.Unlock()
	if other := pf.open[p]; other != nil {
		// Another reader cached a handle meanwhile: use ours once.
		h.dropped = true
		return h, nil
	}
	for len(pf.open) >= pf.limit() {
		if !pf.evictLocked() {
			h.dropped = true
			return h, nil
		}
	}
	if cachedHandles.Add(1) > handleBudget() {
		if !pf.evictLocked() {
			cachedHandles.Add(-1)
			h.dropped = true
			return h, nil
		}
	}
	pf.tick++
	h.lastUse = pf.tick
	pf.open[p] = h
	return h, nil
}

// evictLocked closes the least recently used idle handle, reporting
// whether there was one (or room to begin with).
func (pf *packFiles) evictLocked() bool {
	if pf.maxOpen == 0 {
		return false
	}
	var victim *storedFile
	var oldest uint64
	for p, h := range pf.open {
		if h.refs == 0 && (victim == nil || h.lastUse < oldest) {
			victim, oldest = p, h.lastUse
		}
	}
	if victim == nil {
		return false
	}
	pf.dropLocked(victim)
	return true
}

func (pf *packFiles) release(h *packHandle) {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	h.refs--
	if h.dropped && h.refs == 0 {
		h.f.Close()
	}
}

// drop forgets p's handle (the file was removed or the store closed); it
// is closed once no read uses it.
func (pf *packFiles) drop(p *storedFile) {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.dropLocked(p)
}

func (pf *packFiles) dropLocked(p *storedFile) {
	h := pf.open[p]
	if h == nil {
		return
	}
	delete(pf.open, p)
	cachedHandles.Add(-1)
	h.dropped = true
	if h.refs == 0 {
		h.f.Close()
	}
}

// close drops every handle; pf no longer counts towards the shares.
func (pf *packFiles) close() {
	pf.dropAll()
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if !pf.closed {
		pf.closed = true
		liveStores.Add(-1)
	}
}

func (pf *packFiles) dropAll() {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	for p := range pf.open {
		pf.dropLocked(p)
	}
}
