package remote

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// History retention of a version-4 store (docs/storage.md §5.1,
// "Retention"). A version-4 `current` lists its whole history (its
// segments are never dropped) and at most RetainedV4 + 1 checkpoints. The
// trees a reader can build start from a listed checkpoint, or from the
// empty notebook when every generation's objects are still stored. So the
// history below the oldest listed checkpoint is what a sweep may delete:
// the accepted proposals and group packs of its generations, the
// version-4 segments that index only them, the checkpoints no longer
// listed, and the rollups and registrations no fold can take any more.
//
// Readers learn that it was deleted from the store itself, since
// `current` does not say: the sweep deletes the proposal of the first
// version-4 generation before anything else of the history, and a reader
// that finds it gone reads from the oldest listed checkpoint on (SweptV4,
// Retention). Listed checkpoints only ever move forward, so every floor a
// sweep used is at or below the one readers use.

// OldestCheckpointV4 is the oldest checkpoint m lists: the last retained
// one, else the active one (the genesis when there is none).
func (m *ManifestV4) OldestCheckpointV4() Checkpoint {
	if n := len(m.Checkpoints); n > 0 {
		return m.Checkpoints[n-1]
	}
	return m.Checkpoint
}

// HistoryFloorV4 is the generation at or below which no retained
// generation of m needs its accepted proposal, its group pack, its
// segments or rollups any more: the oldest listed checkpoint's through,
// once it is a version-4 generation at least window (K + M) below m's
// generation, so that no fold in flight needs a tree at or below it. Else
// Upgraded − 1: nothing accepted is deleted. The retention window by time
// is the sweep's to apply (it reads the generations' times).
func HistoryFloorV4(m *ManifestV4, window uint64) uint64 {
	cp := m.OldestCheckpointV4()
	if cp.IsGenesis() || cp.Through < m.Upgraded || cp.Through+window > m.Generation {
		return m.Upgraded - 1
	}
	return cp.Through
}

// outsideWindow reports whether every increment of incs at or below floor
// was accepted (by its proposer's clock) at least retain before now; a
// zero retain has no window.
func outsideWindow(incs []IncrementV4, floor uint64, retain time.Duration, now time.Time) bool {
	if retain <= 0 {
		return true
	}
	cutoff := now.Add(-retain).UnixMilli()
	for _, inc := range incs {
		if inc.Generation <= floor && int64(inc.Time) >= cutoff {
			return false
		}
	}
	return true
}

// sweepCheckpointsV4 deletes the checkpoint packs m does not list whose
// through is at or below the active one's: no fold can make one active
// again (a registered checkpoint must reach above the active one), and
// a reader of m starts from a listed one.
func (n *Notebook) sweepCheckpointsV4(ctx context.Context, m *ManifestV4, del func(string) error) error {
	objs, err := n.store.List(ctx, CheckpointsPrefix)
	if err != nil {
		return fmt.Errorf("remote: cleanup: list %s: %w", CheckpointsPrefix, err)
	}
	listed := map[string]bool{m.Checkpoint.Pack.Key: true}
	for _, cp := range m.Checkpoints {
		listed[cp.Pack.Key] = true
	}
	for _, o := range objs {
		isCP, through, _, err := ParsePackKey(o.Key)
		if err != nil || !isCP || listed[o.Key] || through > m.Checkpoint.Through {
			continue
		}
		if err := del(o.Key); err != nil {
			return err
		}
	}
	return nil
}

// sweepRegistered deletes a registration at or below m's active
// checkpoint, which no fold takes any more (WantsRegistered). For a
// rollup it records in ends the generation its pack's block ends at: the
// pack is the rollup sweep's (CleanupV4, rule 6), which keeps it while a
// `current` of the window may have listed it.
func (n *Notebook) sweepRegistered(ctx context.Context, key string, kind EntryKind, ends map[string]uint64, del func(string) error) error {
	if kind == EntryRollup {
		data, _, err := n.store.Get(ctx, key)
		switch {
		case errors.Is(err, ErrNotFound):
			return nil // deleted meanwhile
		case err != nil:
			return fmt.Errorf("remote: cleanup: read %s: %w", key, err)
		}
		if r, err := DecodeRegistered(key, data); err == nil {
			ends[r.Rollup.Key()] = r.Generation()
		}
	}
	return del(key)
}

// SettledCheckpointV4 is the through of the newest checkpoint m lists
// (active or retained) that every `current` of the window already had
// active, or at least one at or above it: one at least 2·window below
// m's generation (0 when there is none). A fold makes a checkpoint
// active by copying its registration from a LIST of the window, on a
// state less than K past its through (docs/storage.md §3C.8), so the
// write that did lies at or below through + K + M, before the oldest
// `current` of the window at generation − window + 1. No such `current`
// lists a rollup whose block starts at or below it.
func SettledCheckpointV4(m *ManifestV4, window uint64) uint64 {
	var t uint64
	for _, cp := range append([]Checkpoint{m.Checkpoint}, m.Checkpoints...) {
		if !cp.IsGenesis() && cp.Through+2*window <= m.Generation {
			t = max(t, cp.Through)
		}
	}
	return t
}

// SweptV4 reports whether a sweep deleted the history below the oldest
// checkpoint state (a version-4 view) lists: the proposal of its first
// version-4 generation, which a sweep deletes first, is gone (or the
// segment that indexes it).
func (n *Notebook) SweptV4(ctx context.Context, state State) (bool, error) {
	m := state.Manifest
	if m == nil || m.V4 == nil {
		return false, nil
	}
	incs, err := n.Publications(ctx, state, m.V4.Upgraded, m.V4.Upgraded)
	switch {
	case errors.Is(err, ErrMissingPack):
		return true, nil
	case err != nil:
		return false, err
	case len(incs) == 0:
		return false, nil
	}
	_, err = n.store.Head(ctx, incs[0].Pack.Key)
	switch {
	case errors.Is(err, ErrNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("remote: read %s: %w", incs[0].Pack.Key, err)
	}
	return false, nil
}
