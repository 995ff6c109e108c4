package server

import (
	"context"
	"errors"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// The object caches under P/stores/<key>/chains are package objcache's
// (e.caches); this is the engine's side: the mapping of their failures to
// the catalogue, and what they need to know of P's baselines.

// sync makes the cache of state's chain hold the closure of state's head
// (objcache.Caches.Sync), its failures mapped.
func (e *Engine) sync(ctx context.Context, state remote.State) (*objcache.Chain, error) {
	c, err := e.caches.Sync(ctx, state)
	if err == nil {
		return c, nil
	}
	var fe *objcache.FetchError
	if errors.As(err, &fe) {
		return nil, e.packFailure(err)
	}
	return nil, mapErr(err)
}

// packFailure reports a failure of the caches to fetch or keep a pack as
// the pack's, after forgetting the probe verdict if the store is in
// trouble; any other failure is returned as it is.
func (e *Engine) packFailure(err error) error {
	var fe *objcache.FetchError
	if !errors.As(err, &fe) {
		return err
	}
	e.storeTrouble(fe.Err)
	return diag.MapPack(fe.Err)
}

// oldestBaseline returns the lowest generation of the baselines recorded
// in P; false when there is none.
func (e *Engine) oldestBaseline() (uint64, bool) { return pstate.OldestBaseline(e.private) }
