package server

import (
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Pruning the object cache. Each checkpoint starts a new chain cache; the
// store keeps only the active chain and the retained ones (remote cleanup
// deletes the packs of older chains), so the cache of an older chain holds
// nothing the store still serves and only grows P. When a chain is first
// seen in P, the caches of chains older than every chain state's manifest
// keeps are removed (a cache name starts with the generation its
// checkpoint reaches; names of another form are an older release's).
//
// Other processes sharing P are safe: a cache as new as the oldest kept
// chain is never removed, even one of a newer manifest than ours (another
// process may have seen a later checkpoint). A process works with the
// `current` it read, whose chains are at worst one checkpoint older than
// ours unless two checkpoints were swapped in during its one operation;
// even then a read of a removed pack only fails that operation, as when
// the store dropped the pack. Open caches of this process are forgotten,
// not closed, so a call still reading one finishes.

// pruneChains removes the chain caches older than every chain of state's
// manifest. Failures are only logged: the cache is an optimisation.
func (e *Engine) pruneChains(state remote.State) {
	if state.Manifest == nil || state.Manifest.Checkpoint.IsGenesis() {
		return // no checkpoint yet: every cache is the one chain's
	}
	oldest := state.Manifest.Checkpoint.Through
	for _, c := range state.Manifest.Retained {
		oldest = min(oldest, c.Checkpoint.Through)
	}
	ents, err := os.ReadDir(e.chainsDir())
	if err != nil {
		e.log.Warn("cannot list the object caches", "err", err)
		return
	}
	removed := 0
	for _, ent := range ents {
		name := ent.Name()
		if through, ok := chainThrough(name); !ent.IsDir() || (ok && through >= oldest) {
			continue
		}
		e.objMu.Lock()
		delete(e.objects, name)
		e.objMu.Unlock()
		if err := os.RemoveAll(filepath.Join(e.chainsDir(), name)); err != nil {
			e.log.Warn("cannot remove an old object cache", "err", err)
			continue
		}
		removed++
	}
	if removed > 0 {
		e.log.Info("removed the object caches of chains the store no longer keeps", "caches", removed)
	}
}
