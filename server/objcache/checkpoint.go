package objcache

import (
	"context"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// BuildRollups builds and registers the rollups of the blocks generation
// g of state ends (remote.BuildRollupsV4) and, with checkpoint, a
// checkpoint of g, reading c, the cache synced to state. What it builds
// is kept in the caches too, so this host does not download it again.
// Failures are only logged: rollups and checkpoints are an optimisation.
func (cs *Caches) BuildRollups(ctx context.Context, state remote.State, g uint64, checkpoint bool, c *Chain) {
	built, err := cs.notebook.BuildRollupsV4(ctx, state, g, cs.Source(c), c.store)
	// The rollups of one generation (one per level of the blocks it
	// ends) go into the cache as one file, a bundle when there are
	// several: each file a commit creates costs about 150 µs of CPU
	// on an ext4 disk that frees inodes often.
	kept := make([]cas.NamedPack, 0, len(built))
	for _, r := range built {
		kept = append(kept, cas.NamedPack{Name: pstate.HashKey(r.Ref.Key()) + ".pack", Data: r.Data})
	}
	if aerr := c.store.AddPacks(kept); aerr != nil {
		cs.log.Warn("cannot keep the rollups in the cache", "err", aerr)
	}
	if err != nil {
		cs.log.Warn("rollup failed; readers fetch generations instead", "err", err)
		return
	}
	cs.log.Debug("rollups registered", "generation", g, "rollups", len(built))
	if !checkpoint {
		return
	}
	// A checkpoint of g, registered like a rollup: the next fold
	// that lists while g is in its tail makes it the active one.
	ck, data, err := cs.notebook.BuildCheckpointV4(ctx, state, g, cs.Source(c))
	if err != nil || data == nil {
		cs.log.Warn("checkpoint failed; readers start further back", "err", err)
		return
	}
	// Kept in the cache of the chain it will start, so this host
	// does not download what it built once a fold copies it.
	if c, err := cs.Open(KeyAt(ck)); err == nil {
		if err := c.store.AddPack(PackName(ck.Pack), data); err != nil {
			cs.log.Warn("cannot keep the checkpoint in the cache", "err", err)
		}
	}
	cs.log.Info("checkpoint registered", "through", g, "bytes", len(data))
}
