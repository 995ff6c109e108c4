package objcache

import (
	"sync"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Recent keeps, in a long-lived engine, the content of the file
// versions its last commits published, by file ID. The next commit of
// such a file reads the old version three times (the secret check, the
// diffstat, a merge): from here that is a map lookup instead of reading
// and decompressing its chunks from the object cache. A file ID names its
// content, so an entry is never stale; the budget bounds the memory, and
// the oldest entries go first.
type Recent struct {
	mu      sync.Mutex
	byID    map[cas.ID][]byte
	order   []cas.ID // oldest first
	size    int
	maxSize int // total bytes kept
	maxFile int // larger files are not kept
}

// Budgets: a notebook's notes are small, and an agent edits a few of them
// at a time.
const (
	recentBudget  = 8 << 20
	recentMaxFile = 1 << 20
)

// NewRecent returns an empty Recent within the budgets above.
func NewRecent() *Recent {
	return &Recent{byID: map[cas.ID][]byte{}, maxSize: recentBudget, maxFile: recentMaxFile}
}

// Get returns the content of id if it is kept (a nil receiver keeps
// nothing: a one-shot process).
func (r *Recent) Get(id cas.ID) ([]byte, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.byID[id]
	return c, ok
}

// Put keeps content as the content of id. The caller no longer changes it.
func (r *Recent) Put(id cas.ID, content []byte) {
	if r == nil || len(content) > r.maxFile {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byID[id]; ok {
		return
	}
	r.byID[id] = content
	r.order = append(r.order, id)
	r.size += len(content)
	for r.size > r.maxSize && len(r.order) > 0 {
		old := r.order[0]
		r.order = r.order[1:]
		r.size -= len(r.byID[old])
		delete(r.byID, old)
	}
}
