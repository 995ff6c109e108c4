package server

import (
	"context"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

// Probe learns the store's ID (server/storeview), then proves the store's
// guarantees (remote.Probe) unless a fresh verdict is cached in P for
// this store identity (the verdict is server/storeview's). The adapters
// call it at startup; the operations call it too, so a stale verdict is
// re-proved lazily. An incompatible store yields an *Error wrapping
// remote.ErrIncompatible.
//
// The probe writes. With read-only credentials (the probe's write is
// refused with ACCESS_DENIED) it degrades to a read check — `current` can
// be read — and reading operations (pull, status, log) proceed; a commit
// then fails at its first write with ACCESS_DENIED, nothing published. The
// degraded verdict is held for this process only and never recorded.
func (e *Engine) Probe(ctx context.Context) error {
	e.env.Ident.Identify(ctx)
	if err := e.probe.Prove(ctx, e.env.Store, e.env.ProbeFile, e.env.Log); err != nil {
		return diag.MapProbe(err)
	}
	return nil
}
