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

// checkpointTimeout bounds one background checkpoint and its cleanup.
const checkpointTimeout = 5 * time.Minute

// maybeCheckpoint starts a checkpoint if state's active chain is long
// enough and none is running in this engine.
func (e *Engine) maybeCheckpoint(state remote.State) {
	if state.Manifest == nil || len(state.Manifest.Increments) < e.checkpointPacks {
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
	opts := remote.CheckpointOptions{Retained: e.retained, MinIncrements: e.checkpointPacks}
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
