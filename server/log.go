package server

import (
	"context"

	"github.com/slivingdoc/slivingdoc/server/history"
)

// maxLog bounds Log: it reads recent history only.
const maxLog = 1000

// Log returns up to n recent publications, newest first, read from the
// object cache after syncing it with `current`: their diffstat only. It
// walks n commits back from the head (never the whole history) and stops
// early where the chain no longer holds a parent (before the active
// checkpoint).
func (e *Engine) Log(ctx context.Context, n int) ([]history.Entry, error) {
	if n <= 0 {
		return []history.Entry{}, nil
	}
	n = min(n, maxLog)
	if err := e.Probe(ctx); err != nil {
		return nil, err
	}
	return withHealing(e, func() ([]history.Entry, error) {
		state, err := e.env.Notebook.ReadCurrent(ctx)
		if err != nil {
			return nil, e.env.Fail("read current", err)
		}
		chain, err := e.env.Sync(ctx, state)
		if err != nil {
			return nil, err
		}
		// A miss fills the cache with the whole chain
		// (objcache.Caches.Fill), as a version-1 cache held.
		fill := func() error { return e.env.Caches.Fill(ctx, state, chain) }
		ens, err := history.Log(ctx, state, e.env.Caches.Source(chain), fill, n, e.env.Notebook.Publications)
		return ens, e.historyErr("log", err)
	})
}
