package server

import (
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Pruning the object cache. Each checkpoint starts a new chain cache; the
// store keeps only the active chain and the retained ones (remote cleanup
// deletes the packs of older chains), so a cache of any other chain holds
// nothing the store still serves and only grows P. When a chain is first
// seen, the caches of chains that state's manifest names neither as
// active nor as retained are removed.
//
// Other processes sharing P are safe: a process works with the `current`
// it read, whose chains are this manifest's active or retained ones unless
// two checkpoints were swapped in during its one operation; even then a
// read of a removed pack only makes it fail and retry, as when the store
// dropped that pack. Open caches of this process are forgotten, not
// closed, so a call still reading one finishes (file handles stay valid
// until collected).

// pruneChains removes the chain caches state's manifest does not name.
// Failures are only logged: the cache is an optimisation.
func (e *Engine) pruneChains(state remote.State) {
	if state.Manifest == nil || state.Manifest.Checkpoint.IsGenesis() {
		return // no checkpoint yet: every cache is the one chain's
	}
	keep := map[string]bool{}
	for _, c := range state.Manifest.Chains() {
		keep[chainKeyOf(c)] = true
	}
	ents, err := os.ReadDir(e.chainsDir())
	if err != nil {
		e.log.Warn("cannot list the object caches", "err", err)
		return
	}
	removed := 0
	for _, ent := range ents {
		name := ent.Name()
		if !ent.IsDir() || keep[name] {
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
