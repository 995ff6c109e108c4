package server

import (
	"context"
	"errors"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/objcache"
)

// maxLog bounds Log: it reads recent history only.
const maxLog = 1000

// Log returns up to n recent publications, newest first, read from the
// object cache after syncing it with `current`. It walks n commits back
// from the head (never the whole history) and stops early where the chain
// no longer holds a parent (before the active checkpoint).
func (e *Engine) Log(ctx context.Context, n int) ([]LogEntry, error) {
	if n <= 0 {
		return []LogEntry{}, nil
	}
	n = min(n, maxLog)
	if err := e.Probe(ctx); err != nil {
		return nil, err
	}
	return withHealing(e, func() ([]LogEntry, error) { return e.history(ctx, n) })
}

// history is Log after the request checks.
func (e *Engine) history(ctx context.Context, n int) ([]LogEntry, error) {
	state, err := e.notebook.ReadCurrent(ctx)
	if err != nil {
		return nil, e.fail("read current", err)
	}
	chain, err := e.sync(ctx, state)
	if err != nil {
		return nil, err
	}
	// A catch-up through rollups holds the head's closure but not the
	// older commits and trees a log reads: on the first miss, the cache is
	// filled with the whole chain (objcache.Caches.Fill), as a version-1 cache held.
	src := &historySource{primary: e.caches.Source(chain), fill: func() error { return e.caches.Fill(ctx, state, chain) }}
	out := []LogEntry{}
	// A commit's generation is the increment that published it; commits
	// folded into the checkpoint have none left and end the log.
	gens := map[cas.ID]uint64{}
	authors := map[cas.ID]string{} // by head; only format v4 records one
	if m := state.Manifest; m != nil {
		if !m.Checkpoint.IsGenesis() {
			gens[m.Checkpoint.Head] = m.Checkpoint.Through
		}
		// Checkpoint swaps take generations too: 2n covers n entries
		// unless checkpoints are nearly as frequent as commits.
		lo := max(m.Checkpoint.Through+1, m.Generation-min(m.Generation, uint64(2*n+2*remote.SegmentFanout)))
		incs, err := e.notebook.Publications(ctx, state, lo, m.Generation)
		if err != nil {
			return nil, e.fail("read history", err)
		}
		for _, inc := range incs {
			gens[inc.Head] = inc.Generation
			if inc.Author != "" {
				authors[inc.Head] = inc.Author
			}
		}
	}
	head := state.Head()
	var tree map[string]cas.ID
	for len(out) < n && !head.IsZero() {
		gen, ok := gens[head]
		if !ok {
			break
		}
		o, err := src.Get(head)
		if errors.Is(err, cas.ErrNotFound) {
			break // older than the chain the cache holds
		}
		if err != nil { // a damaged cached pack: Log heals and retries
			return nil, e.fail("read commit", err)
		}
		c, err := cas.DecodeCommit(o)
		if err != nil {
			return nil, e.fail("decode commit", err)
		}
		if tree == nil {
			if tree, err = cas.ReadTree(src, c.Tree); err != nil {
				return nil, e.fail("read tree", err)
			}
		}
		parentTree := map[string]cas.ID{}
		if !c.Parent.IsZero() {
			po, err := src.Get(c.Parent)
			if err == nil {
				var pc cas.Commit
				if pc, err = cas.DecodeCommit(po); err != nil {
					return nil, e.fail("decode commit", err)
				}
				parentTree, err = cas.ReadTree(src, pc.Tree)
			}
			if errors.Is(err, cas.ErrNotFound) {
				parentTree = nil // older than the chain the cache holds
			} else if err != nil {
				return nil, e.fail("read parent", err)
			}
		}
		entry := LogEntry{Generation: gen, Time: c.Time, Message: string(c.Message), Author: authors[head], Files: []FileStat{}}
		if parentTree != nil {
			if entry.Files, err = treeDelta(src, parentTree, tree); err != nil {
				return nil, e.fail("diffstat", err)
			}
		}
		out = append(out, entry)
		head, tree = c.Parent, parentTree
		if tree == nil {
			break
		}
	}
	return out, nil
}

// historySource reads from the cache and, after the first miss, from the
// cache filled with the whole chain.
type historySource struct {
	primary cas.Source
	fill    func() error
	filled  bool
}

func (h *historySource) Get(id cas.ID) (cas.Object, error) {
	o, err := h.primary.Get(id)
	if err == nil || !errors.Is(err, cas.ErrNotFound) || h.filled {
		return o, err
	}
	h.filled = true
	if ferr := h.fill(); ferr != nil {
		return cas.Object{}, ferr
	}
	if s, ok := h.primary.(*objcache.Source); ok {
		s.Rescan()
	}
	return h.primary.Get(id)
}

// treeDelta is the per-file line delta from one tree to the next.
func treeDelta(src cas.Source, from, to map[string]cas.ID) ([]FileStat, error) {
	out := []FileStat{}
	for _, p := range unionPaths(from, to) {
		a, hadA := from[p]
		b, hasB := to[p]
		if hadA && hasB && a == b {
			continue
		}
		var ac, bc []byte
		var err error
		if hadA {
			if ac, err = cas.ReadFile(src, a); err != nil {
				return nil, err
			}
		}
		if hasB {
			if bc, err = cas.ReadFile(src, b); err != nil {
				return nil, err
			}
		}
		ins, del := merge.Stat(nilIfAbsent(ac, hadA), nilIfAbsent(bc, hasB))
		out = append(out, FileStat{Path: p, Insertions: ins, Deletions: del})
	}
	return out, nil
}
