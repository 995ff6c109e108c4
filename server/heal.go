package server

import (
	"errors"
	"io/fs"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Healing the object cache. The store is the authority and every pack it
// serves is verified against the manifest (size and BLAKE3), so a cached
// pack that fails a read check (cas.ErrCorrupt: a bad disk, a stray
// write) is not a reason to give up: the operation drops every cached pack
// that no longer verifies and runs once more, and sync fetches what the
// chain needs again. Only if the fresh copy is bad too does the caller see
// STORAGE_INTEGRITY — then CORRUPT_PACK, since the store's own copy is
// bad. CACHE_CORRUPT remains for a cache that cannot be repaired.

// withHealing runs op, and once more after healing the cache if it failed
// because a cached object was corrupt.
func withHealing[T any](e *Engine, op func() (T, error)) (T, error) {
	res, err := op()
	if err == nil || !errors.Is(err, cas.ErrCorrupt) {
		return res, err
	}
	if !e.healCache() {
		return res, err
	}
	var de *Error
	if !errors.As(err, &de) || de.Code != CodeStorageIntegrity || de.Reason != ReasonCacheCorrupt {
		// A failure after local changes began (RECOVERY_FAILURE) is not
		// retried: the cache is repaired for the caller's next call.
		return res, err
	}
	e.log.Info("retrying after dropping damaged cached packs")
	return op()
}

// healCache removes from every open chain cache the packs that fail
// verification, and reports whether it removed any. A pack kept in a
// bundle is removed with the whole bundle (cas.Store.RemovePack), its good
// packs too: they are fetched again with the damaged one. Other processes
// sharing the cache lose at most downloads: a read of a removed pack
// makes them rescan and fetch it again.
func (e *Engine) healCache() bool {
	e.objMu.Lock()
	caches := make([]*chainCache, 0, len(e.objects))
	for _, c := range e.objects {
		caches = append(caches, c)
	}
	e.objMu.Unlock()
	dropped := false
	for _, c := range caches {
		names, broken := c.store.Packs()
		var bad []string
		for name := range broken {
			bad = append(bad, name)
		}
		for _, name := range names {
			if err := c.store.VerifyPack(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				bad = append(bad, name)
			}
		}
		for _, name := range bad {
			// A pack kept in a bundle goes with the whole bundle: sync
			// fetches all of its packs again. Its other bad packs are
			// then already gone (fs.ErrNotExist).
			err := c.store.RemovePack(name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				e.log.Warn("cannot remove a damaged cached pack", "err", err)
				continue
			}
			e.log.Warn("removed a damaged cached pack; it is fetched again", "pack", name)
			dropped = true
			e.forgetReach(c)
		}
	}
	return dropped
}
