package cas

import (
	"slices"
	"sync"
)

// maxCachedTreeBytes bounds the bodies a Store's tree cache holds: a few
// whole directories of a large notebook, small beside what a process
// reading them holds anyway.
const maxCachedTreeBytes = 16 << 20

// treeCache keeps the trees a Store rebuilt, verified against their IDs,
// with the number of deltas each took. A commit reads the same trees
// several times (the fold, the packing of the new trees, recovery, the
// rollups), and each read of a tree stored as a delta walks its chain of
// bases, up to WriteDeltaDepth records each decoded, patched and hashed:
// with the cache a chain is walked once per process, and a new tree whose
// base was read costs one delta. An object's bytes never change under its
// ID, so a kept tree stays right; the store still looks the ID up in its
// index before serving it, so a removed pack's trees are not served.
type treeCache struct {
	mu    sync.Mutex
	trees map[ID]cachedTree
	order []ID // insertion order: the oldest is dropped first
	bytes int
}

type cachedTree struct {
	body  []byte // shared: never modified, handed out only as a base or cloned
	depth int
}

// get returns the body and depth of tree id if it is kept.
func (c *treeCache) get(id ID) ([]byte, int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.trees[id]
	return t.body, t.depth, ok
}

// put keeps a copy of o, a tree verified against its ID, rebuilt through
// depth deltas.
func (c *treeCache) put(o Object, depth int) {
	if o.Kind != KindTree || len(o.Body) > maxCachedTreeBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.trees[o.ID]; ok {
		return
	}
	if c.trees == nil {
		c.trees = map[ID]cachedTree{}
	}
	for c.bytes+len(o.Body) > maxCachedTreeBytes && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.trees[old].body)
		delete(c.trees, old)
	}
	c.trees[o.ID] = cachedTree{body: slices.Clone(o.Body), depth: depth}
	c.order = append(c.order, o.ID)
	c.bytes += len(o.Body)
}

// reset drops every kept tree.
func (c *treeCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trees, c.order, c.bytes = nil, nil, 0
}
