package server

import (
	"errors"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// Healing the object cache. The store is the authority and every pack it
// serves is verified against the manifest (size and BLAKE3), so a cached
// pack that fails a read check (cas.ErrCorrupt: a bad disk, a stray
// write) is not a reason to give up: the operation drops every cached pack
// that no longer verifies (objcache.Caches.Heal) and runs once more, and
// sync fetches what the chain needs again. Only if the fresh copy is bad
// too does the caller see STORAGE_INTEGRITY — then CORRUPT_PACK, since the
// store's own copy is bad. CACHE_CORRUPT remains for a cache that cannot
// be repaired.

// withHealing runs op, and once more after healing the cache if it failed
// because a cached object was corrupt.
func withHealing[T any](e *Engine, op func() (T, error)) (T, error) {
	res, err := op()
	if err == nil || !errors.Is(err, cas.ErrCorrupt) {
		return res, err
	}
	if !e.env.Caches.Heal() {
		return res, err
	}
	var de *diag.Error
	if !errors.As(err, &de) || de.Code != diag.CodeStorageIntegrity || de.Reason != diag.ReasonCacheCorrupt {
		// A failure after local changes began (RECOVERY_FAILURE) is not
		// retried: the cache is repaired for the caller's next call.
		return res, err
	}
	e.env.Log.Info("retrying after dropping damaged cached packs")
	return op()
}
