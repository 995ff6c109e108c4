package objcache

import (
	"errors"
	"io/fs"
)

// Healing the object cache. The store is the authority and every pack it
// serves is verified against the manifest (size and BLAKE3), so a cached
// pack that fails a read check (cas.ErrCorrupt: a bad disk, a stray
// write) is not a reason to give up: the engine drops every cached pack
// that no longer verifies (Heal) and runs the operation once more, and
// Sync fetches what the chain needs again.

// Heal removes from every open chain cache the packs that fail
// verification, and reports whether it removed any. A pack kept in a
// bundle is removed with the whole bundle (cas.Store.RemovePack), its good
// packs too: they are fetched again with the damaged one. Other processes
// sharing the cache lose at most downloads: a read of a removed pack
// makes them rescan and fetch it again.
func (cs *Caches) Heal() bool {
	cs.mu.Lock()
	caches := make([]*Chain, 0, len(cs.open))
	for _, c := range cs.open {
		caches = append(caches, c)
	}
	cs.mu.Unlock()
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
				cs.log.Warn("cannot remove a damaged cached pack", "err", err)
				continue
			}
			cs.log.Warn("removed a damaged cached pack; it is fetched again", "pack", name)
			dropped = true
			c.forgetReach()
		}
	}
	return dropped
}
