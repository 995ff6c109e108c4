package server

import (
	"context"
	"errors"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Checkpoints run in the background of the commit whose accepted state
// reached the threshold (Config.CheckpointPacks increments in the active
// chain): the commit's result never waits for them and never fails because
// of them. One checkpoint at a time per engine; writers in other processes
// may start their own, the store lets one win (remote.Checkpoint). Close
// waits for a running checkpoint, so a CLI process finishes the work it
// started before it exits.

// checkpointTimeout bounds one background checkpoint and its cleanup;
// rollupTimeout the rollups of one publication: they are an optimisation
// (a missing one costs readers a few requests), and a CLI process waits
// for them before it exits, so a slow or frozen store must not hold it.
const (
	checkpointTimeout = 5 * time.Minute
	rollupTimeout     = 20 * time.Second
)

// afterPublish starts the background work an accepted publication may
// call for: the rollups of the blocks its generation ends, and a
// checkpoint when the active chain is long enough.
func (e *Engine) afterPublish(state remote.State) {
	if !state.Manifest.RollupsDue() { // blocks ending here or at the swaps just before
		e.maybeCheckpoint(state)
		return
	}
	// The rollups first, so a checkpoint's cleanup sees (and removes)
	// those it makes unnecessary.
	e.background.Go(func() {
		e.buildRollups(state)
		e.maybeCheckpoint(state)
	})
}

// afterPublishV4 starts the background work of a version-4 commit
// accepted at generation g of state: the rollups of the blocks g ends
// (remote.BuildRollupsV4: each pack stored, then its descriptor
// registered, which the next fold that LISTs copies into `current`).
// The member of a group whose generation ends a block builds it, so each
// block has one builder. A failure only costs readers requests.
func (e *Engine) afterPublishV4(state remote.State, g uint64) {
	if state.Manifest == nil || state.Manifest.V4 == nil {
		return
	}
	cp := remote.CheckpointDueV4(state.Manifest.V4, g, e.checkpointPacks)
	if len(remote.RollupLevelsV4(g)) == 0 && !cp {
		return
	}
	e.background.Go(func() {
		e.rollupMu.Lock()
		defer e.rollupMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), rollupTimeout)
		defer cancel()
		c, err := e.sync(ctx, state) // reaches state's head, and so g's
		if err != nil {
			e.log.Warn("rollup skipped: the object cache cannot catch up", "err", err)
			return
		}
		built, err := e.notebook.BuildRollupsV4(ctx, state, g, e.source(c), c.store)
		for _, r := range built {
			if aerr := c.store.AddPack(hashKey(r.Ref.Key())+".pack", r.Data); aerr != nil {
				e.log.Warn("cannot keep the rollup in the cache", "err", aerr)
			}
		}
		if err != nil {
			e.log.Warn("rollup failed; readers fetch generations instead", "err", err)
			return
		}
		e.log.Debug("rollups registered", "generation", g, "rollups", len(built))
		if !cp {
			return
		}
		// A checkpoint of g, registered like a rollup: the next fold
		// that lists while g is in its tail makes it the active one.
		ck, data, err := e.notebook.BuildCheckpointV4(ctx, state, g, e.source(c))
		if err != nil || data == nil {
			e.log.Warn("checkpoint failed; readers start further back", "err", err)
			return
		}
		// Kept in the cache of the chain it will start, so this host
		// does not download what it built once a fold copies it.
		if c, err := e.openChain(chainKeyAt(ck)); err == nil {
			if err := c.store.AddPack(packName(ck.Pack), data); err != nil {
				e.log.Warn("cannot keep the checkpoint in the cache", "err", err)
			}
		}
		e.log.Info("checkpoint registered", "through", g, "bytes", len(data))
	})
}

// buildRollups builds the rollups of the blocks that state's generation
// ends (remote.BuildRollups), reading objects from the chain's cache,
// which reaches that generation (keepOwnPack). A failure only costs
// readers requests: they fetch the halves instead.
func (e *Engine) buildRollups(state remote.State) {
	e.buildRollupsAt(state, state.Generation())
}

// buildRollupsAt builds the rollups of the blocks that generation g of
// state ends (a group's write accepts several generations at once).
func (e *Engine) buildRollupsAt(state remote.State, g uint64) {
	if state.Manifest == nil {
		return
	}
	func() {
		e.rollupMu.Lock()
		defer e.rollupMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), rollupTimeout)
		defer cancel()
		c, err := e.openChain(chainKey(state))
		if err != nil {
			e.log.Warn("rollup skipped: cannot open the object cache", "err", err)
			return
		}
		built, err := e.notebook.BuildRollups(ctx, state, g, e.source(c))
		for _, r := range built {
			if aerr := c.store.AddPack(hashKey(r.Key)+".pack", r.Data); aerr != nil {
				e.log.Warn("cannot keep the rollup in the cache", "err", aerr)
			}
		}
		if err != nil {
			e.log.Warn("rollup failed; readers fetch increments instead", "err", err)
			return
		}
		e.log.Debug("rollups written", "generation", g, "rollups", len(built))
	}()
}

// maybeCheckpoint starts a checkpoint if state's active chain is long
// enough and none is running in this engine.
func (e *Engine) maybeCheckpoint(state remote.State) {
	if state.Manifest == nil || state.Manifest.ActiveLength() < e.checkpointPacks {
		return
	}
	if !e.checkpointing.CompareAndSwap(false, true) {
		return
	}
	e.background.Go(func() {
		defer e.checkpointing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), checkpointTimeout)
		defer cancel()
		e.checkpoint(ctx, state)
	})
}

// checkpoint builds and swaps in a checkpoint, reading objects from the
// cache of the chain state belongs to, then removes the packs it made
// unnecessary. Every outcome is only logged.
func (e *Engine) checkpoint(ctx context.Context, state remote.State) {
	opts := remote.CheckpointOptions{Retained: e.retained, MinIncrements: e.checkpointPacks, RetainFor: e.retain}
	if c, err := e.openChain(chainKey(state)); err == nil {
		opts.Source = e.source(c)
	}
	res, err := e.notebook.Checkpoint(ctx, opts)
	switch {
	case errors.Is(err, remote.ErrNoCheckpoint), errors.Is(err, remote.ErrCheckpointSuperseded):
		e.log.Debug("checkpoint not needed", "err", err)
		return
	case err != nil:
		e.log.Warn("checkpoint failed; accepted state is unchanged", "err", err)
		return
	}
	e.log.Info("checkpoint swapped in", "generation", res.State.Generation(), "through", res.Checkpoint.Through,
		"bytes", len(res.Pack), "attempts", res.Attempts, "builds", res.Builds)
	// The next sync of the new chain need not download what was just built.
	if c, err := e.openChainOf(res.State); err == nil {
		if err := c.store.AddPack(packName(res.Checkpoint.Pack), res.Pack); err != nil {
			e.log.Warn("cannot keep the checkpoint in the cache", "err", err)
		}
	}
	cl, err := e.notebook.Cleanup(ctx, res.Checkpoint.Through)
	if err != nil {
		e.log.Warn("cleanup stopped; unreferenced packs may remain", "deleted", len(cl.Deleted), "err", err)
		return
	}
	e.log.Debug("cleanup done", "deleted", len(cl.Deleted), "kept", cl.Kept)
}
