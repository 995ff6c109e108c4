package remote

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Cleanup (docs/operations.md) removes objects nothing needs any more: the
// increments and segments that fell out of the retained history, the
// checkpoints no longer kept, rollups below the active checkpoint, and
// orphans (proposals that lost a race, checkpoints that were superseded).
//
// Safety rests on two rules:
//   - Only objects whose key generation is at or below the cutoff are
//     candidates, and the cutoff is capped at the active checkpoint's
//     through-generation as read just before each delete batch (so never
//     above `current`'s generation: a store whose `current` went back in
//     time keeps the newer packs, see docs/operations.md). A pack below it
//     can never become referenced again: an increment proposal for
//     generation g <= cutoff is conditional on the ETag of generation
//     g-1, long replaced, and a checkpoint through g <= cutoff re-applies
//     only while its prefix is still in the active chain, which it is not.
//     Anything newer (a proposal in flight) is never touched.
//   - Each batch re-reads `current` and keeps everything it references:
//     version 1, every pack of every chain; version 2, every increment at
//     or above the oldest generation its history lists, every listed
//     checkpoint, every segment at or above that generation, and the
//     rollups above the active checkpoint. `current` itself is never a
//     candidate.
//
// A reader that read `current` before a cleanup and then misses one of
// its packs re-reads `current` and retries (server/objcache): the pack it
// needed is no longer needed by the newer manifest.

// cleanupBatch is how many deletes follow one re-read of `current`.
const cleanupBatch = 64

// CleanupResult lists what a cleanup did.
type CleanupResult struct {
	Deleted []string // keys removed
	Kept    int      // candidates kept: `current` references them, or they lie above the active checkpoint
}

// cleanupCandidate is one listed object and the generation its key names
// (an increment's generation, a checkpoint's through, a segment's or a
// rollup's last).
type cleanupCandidate struct {
	key  string
	kind string // "increment", "checkpoint", "segment", "rollup"
	gen  uint64
}

// Cleanup deletes every object at or below cutoff (a checkpoint's
// through-generation) that `current` does not reference. A store error
// stops it; what was deleted stays listed in the result. Accepted state is
// never affected.
func (n *Notebook) Cleanup(ctx context.Context, cutoff uint64) (CleanupResult, error) {
	var res CleanupResult
	var candidates []cleanupCandidate
	for _, prefix := range []string{IncrementsPrefix, CheckpointsPrefix, RollupsPrefix, SegmentsPrefix} {
		objs, err := n.store.List(ctx, prefix)
		if err != nil {
			return res, fmt.Errorf("remote: cleanup: list %s: %w", prefix, err)
		}
		for _, o := range objs {
			if c, ok := parseCandidate(o.Key); ok && c.gen <= cutoff {
				candidates = append(candidates, c)
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
		if err := state.Manifest.refuseView(); err != nil {
			// Its keeper knows neither proposals nor group packs.
			return res, fmt.Errorf("remote: cleanup: %w", err)
		}
		keep := keeper(state.Manifest, cutoff)
		for _, c := range batch {
			if keep(c) {
				res.Kept++
				continue
			}
			if err := n.store.Delete(ctx, c.key); err != nil {
				return res, fmt.Errorf("remote: cleanup: delete %s: %w", c.key, err)
			}
			res.Deleted = append(res.Deleted, c.key)
		}
	}
	// Group commit's dead descriptors (proposal.go): a failure here
	// leaves them for the next cleanup.
	if dead, err := n.CleanProposals(ctx); err == nil {
		res.Deleted = append(res.Deleted, dead...)
	}
	return res, nil
}

func parseCandidate(key string) (cleanupCandidate, bool) {
	switch {
	case strings.HasPrefix(key, SegmentsPrefix):
		_, _, last, _, err := ParseSegmentKey(key)
		return cleanupCandidate{key, "segment", last}, err == nil
	case strings.HasPrefix(key, RollupsPrefix):
		_, last, err := ParseRollupKey(key)
		return cleanupCandidate{key, "rollup", last}, err == nil
	}
	cp, gen, _, err := ParsePackKey(key)
	kind := "increment"
	if cp {
		kind = "checkpoint"
	}
	return cleanupCandidate{key, kind, gen}, err == nil
}

// keeper returns the rule that decides, for the manifest m just read,
// which candidates stay.
func keeper(m *Manifest, cutoff uint64) func(cleanupCandidate) bool {
	limit := min(cutoff, m.Checkpoint.Through, m.Generation)
	if m.Version < 2 {
		referenced := m.Referenced()
		return func(c cleanupCandidate) bool {
			_, ok := referenced[c.key]
			return ok || c.gen > limit || c.kind == "segment" || c.kind == "rollup"
		}
	}
	listed := map[string]bool{m.Checkpoint.Pack.Key: true}
	for _, cp := range m.Checkpoints {
		listed[cp.Pack.Key] = true
	}
	oldest := m.Oldest()
	return func(c cleanupCandidate) bool {
		switch {
		case c.gen > limit:
			return true
		case c.kind == "checkpoint":
			return listed[c.key]
		case c.kind == "rollup":
			return false // at or below the active checkpoint: no reader needs it
		default: // increments and segments of the retained history
			return c.gen >= oldest
		}
	}
}
