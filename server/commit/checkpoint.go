package commit

import (
	"context"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Rollups and checkpoints run in the background of the commit whose
// generation ends a rollup block or is due for a checkpoint (every
// CheckpointPacks generations past the active one): the commit's
// result never waits for them and never fails because of them. Each is
// stored, then registered; the next fold that LISTs copies it into
// `current`. The engine's Close waits for them, so a CLI process finishes
// the work it started before it exits.

// rollupTimeout bounds the rollups and checkpoint of one publication:
// they are an optimisation (a missing one costs readers a few requests),
// and a CLI process waits for them before it exits, so a slow or frozen
// store must not hold it.
const rollupTimeout = 20 * time.Second

// StartRollups starts the background work of a version-4 commit
// accepted at generation g of state: the rollups of the blocks g ends
// (remote.BuildRollupsV4: each pack stored, then its descriptor
// registered, which the next fold that LISTs copies into `current`).
// The member of a group whose generation ends a block builds it, so each
// block has one builder. A failure only costs readers requests.
func (b *Background) StartRollups(state remote.State, g uint64) {
	if state.Manifest == nil || state.Manifest.V4 == nil {
		return
	}
	cp := remote.CheckpointDueV4(state.Manifest.V4, g, b.CheckpointPacks)
	if len(remote.RollupLevelsV4(g)) == 0 && !cp {
		return
	}
	b.wg.Go(func() {
		b.rollupMu.Lock()
		defer b.rollupMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), rollupTimeout)
		defer cancel()
		c, err := b.Env.Sync(ctx, state) // reaches state's head, and so g's
		if err != nil {
			b.Env.Log.Warn("rollup skipped: the object cache cannot catch up", "err", err)
			return
		}
		b.Env.Caches.BuildRollups(ctx, state, g, cp, c) // the rollups and checkpoint, kept in the caches too
	})
}
