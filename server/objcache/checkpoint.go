package objcache

import (
	"context"

	"github.com/slivingdoc/slivingdoc/remote"
)

// BuildRollups builds and registers the rollups of the blocks generation
// g of state ends (remote.BuildRollupsV4) and, with checkpoint, a
// checkpoint of g, reading c, the cache synced to state. The checkpoint
// is kept in the cache of the chain it will start, so this host does not
// download it again; the rollups are not kept: they are built from c,
// which holds their objects and reaches g, and a sync plans from its
// reach, so a cache of this host reads a rollup of blocks ending at or
// before g only after healing forgot its reach (then it fetches it, as a
// host that did not build it does). Keeping them cost a file in the cache
// per rollup, written and never read. Failures are only logged: rollups
// and checkpoints are an optimisation.
func (cs *Caches) BuildRollups(ctx context.Context, state remote.State, g uint64, checkpoint bool, c *Chain) {
	built, err := cs.notebook.BuildRollupsV4(ctx, state, g, cs.Source(c), c.store)
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
