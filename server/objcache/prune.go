package objcache

import (
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Pruning the object cache. Each checkpoint starts a new chain cache; the
// store keeps only the active chain and the retained ones (remote cleanup
// deletes the packs of older chains), so the cache of an older chain holds
// nothing the store still serves and only grows P — except the baseline
// content of a directory that was last synchronised in that chain: its
// next merge reads the base from there, and nothing else has it. When a
// chain is first seen in P, the caches older than both every chain state's
// manifest keeps and the chain of the oldest baseline recorded in P are
// removed (a cache name starts with the generation its checkpoint
// reaches; names of another form are an older release's and are kept).
// A directory abandoned with an old baseline therefore pins the caches
// from its chain on; so does a directory of another store sharing P
// (baselines do not say which store they belong to).
//
// Other processes sharing P are safe: a cache as new as the oldest kept
// chain is never removed, even one of a newer manifest than ours (another
// process may have seen a later checkpoint). A process works with the
// `current` it read, whose chains are at worst one checkpoint older than
// ours unless two checkpoints were swapped in during its one operation;
// even then a read of a removed pack only fails that operation, as when
// the store dropped the pack. Open caches of this process are forgotten,
// not closed, so a call still reading one finishes.

// prune removes the chain caches older than every chain of state's
// manifest. Failures are only logged: the cache is an optimisation.
func (cs *Caches) prune(state remote.State) {
	if state.Manifest == nil || state.Manifest.Checkpoint.IsGenesis() {
		return // no checkpoint yet: every cache is the one chain's
	}
	oldest := state.Manifest.Checkpoint.Through
	for _, c := range state.Manifest.Retained {
		oldest = min(oldest, c.Checkpoint.Through)
	}
	for _, cp := range state.Manifest.Checkpoints {
		oldest = min(oldest, cp.Through)
	}
	ents, err := os.ReadDir(cs.Dir())
	if err != nil {
		cs.log.Warn("cannot list the object caches", "err", err)
		return
	}
	if g, ok := cs.oldestBaseline(); ok {
		// The cache of the chain that held the oldest baseline's head: the
		// newest one whose checkpoint is at or below its generation.
		pin, found := uint64(0), false
		for _, ent := range ents {
			if t, ok := chainThrough(ent.Name()); ok && t <= g && (!found || t > pin) {
				pin, found = t, true
			}
		}
		if found {
			oldest = min(oldest, pin)
		}
	}
	removed := 0
	for _, ent := range ents {
		name := ent.Name()
		through, ok := chainThrough(name)
		if !ent.IsDir() || !ok || through >= oldest {
			continue // an older release's cache cannot be dated: kept
		}
		cs.mu.Lock()
		delete(cs.open, name)
		cs.mu.Unlock()
		if err := os.RemoveAll(filepath.Join(cs.Dir(), name)); err != nil {
			cs.log.Warn("cannot remove an old object cache", "err", err)
			continue
		}
		_ = os.Remove(filepath.Join(cs.storeDir(), "reach", name))
		removed++
	}
	if removed > 0 {
		cs.log.Info("removed the object caches of chains the store no longer keeps", "caches", removed)
	}
}
