package remote

import (
	"context"
	"fmt"
	"slices"
)

// Cleanup (docs/operations.md) removes packs no chain needs any more: the
// increments a checkpoint folded that fell out of the retained chains, and
// orphans (proposals that lost a race, checkpoints that were superseded).
//
// Safety rests on two rules:
//   - Only packs whose key generation is at or below the cutoff are
//     candidates, and the cutoff is capped at the active checkpoint's
//     through-generation as read just before each delete batch. A pack
//     below it can never become referenced again: an increment proposal
//     for generation g <= cutoff is conditional on the ETag of generation
//     g-1, long replaced, and a checkpoint through g <= cutoff re-applies
//     only while its prefix is still in the active chain, which it is not.
//     Anything newer (a proposal in flight) is never touched.
//   - Each batch re-reads `current` and skips every pack an active or
//     retained chain references. `current` itself is never a candidate.

// cleanupBatch is how many deletes follow one re-read of `current`.
const cleanupBatch = 64

// CleanupResult lists what a cleanup did.
type CleanupResult struct {
	Deleted []string // pack keys removed
	Kept    int      // candidates kept: a chain references them, or they lie above the active checkpoint
}

// Cleanup deletes every pack at or below cutoff (a checkpoint's
// through-generation) that no chain of `current` references. A store error
// stops it; what was deleted stays listed in the result. Accepted state is
// never affected.
func (n *Notebook) Cleanup(ctx context.Context, cutoff uint64) (CleanupResult, error) {
	var res CleanupResult
	type candidate struct {
		key string
		gen uint64
	}
	var candidates []candidate
	for _, prefix := range []string{IncrementsPrefix, CheckpointsPrefix} {
		objs, err := n.store.List(ctx, prefix)
		if err != nil {
			return res, fmt.Errorf("remote: cleanup: list %s: %w", prefix, err)
		}
		for _, o := range objs {
			if _, gen, _, err := ParsePackKey(o.Key); err == nil && gen <= cutoff {
				candidates = append(candidates, candidate{o.Key, gen})
			}
		}
	}
	for batch := range slices.Chunk(candidates, cleanupBatch) {
		state, err := n.ReadCurrent(ctx)
		if err != nil {
			return res, fmt.Errorf("remote: cleanup: %w", err)
		}
		if state.Manifest == nil {
			return res, nil // no accepted state to protect packs by: touch nothing
		}
		limit := min(cutoff, state.Manifest.Checkpoint.Through)
		referenced := state.Manifest.Referenced()
		for _, c := range batch {
			if _, ok := referenced[c.key]; ok || c.gen > limit {
				res.Kept++
				continue
			}
			if err := n.store.Delete(ctx, c.key); err != nil {
				return res, fmt.Errorf("remote: cleanup: delete %s: %w", c.key, err)
			}
			res.Deleted = append(res.Deleted, c.key)
		}
	}
	return res, nil
}
