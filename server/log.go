package server

import (
	"context"
	"errors"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/history"
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
	ens, err := history.Log(ctx, state, src, n, e.notebook.Publications)
	if err != nil {
		return nil, e.historyErr("log", err)
	}
	out := make([]LogEntry, len(ens))
	for i, en := range ens {
		out[i] = LogEntry{Generation: en.Generation, Time: en.Time, Message: en.Message, Author: en.Author, Files: fileStats(en.Files)}
	}
	return out, nil
}

// treeDelta is the per-file line delta from one tree to the next.
func treeDelta(src cas.Source, from, to map[string]cas.ID) ([]FileStat, error) {
	cs, err := history.TreeDelta(src, from, to)
	if err != nil {
		return nil, err
	}
	return fileStats(cs), nil
}

func fileStats(cs []history.Change) []FileStat {
	out := make([]FileStat, len(cs))
	for i, c := range cs {
		out[i] = FileStat{Path: c.Path, Insertions: c.Insertions, Deletions: c.Deletions}
	}
	return out
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
