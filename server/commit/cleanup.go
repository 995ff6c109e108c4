package commit

import (
	"context"
	"math/bits"
	"time"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Cleanup of a version-4 store (remote.CleanupV4, docs/storage.md §5):
// run in the background of the commit accepted at a generation the rule
// below picks. Each generation is accepted for exactly one commit, so the
// rule picks one commit of the whole fleet, whichever process made it,
// without any coordination; a commit whose process dies before the sweep
// only delays it to the next picked generation.
//
// A sweep also deletes the history below the floor (the oldest listed
// checkpoint, outside --retain: remote/retain_v4.go), so one chosen
// commit removes what the checkpoints made unnecessary.
//
// A sweep reads the history above the floor (H generations: about H/8
// segment GETs), LISTs packs/groups/ and proposals/ (about H/1000 pages
// each) and GETs the few group packs no increment names. So a sweep runs
// at every multiple of a period that grows with the history: the largest
// power of two not above H/2, and at least twice the window. That costs
// about one GET per four commits and one LIST per 250 commits however long
// the history, and a decided orphan waits at most the window plus one
// period (about half the history's length) before a sweep removes it.

// cleanupTimeout bounds one sweep: a CLI process waits for it before it
// exits, and an unfinished sweep leaves its work to the next one.
const cleanupTimeout = 2 * time.Minute

// sweepDue reports whether the commit accepted at generation g runs
// the sweep, for a store whose history floor is floor and window window.
func sweepDue(g, floor, window uint64) bool {
	if window == 0 || g <= floor+window {
		return false
	}
	period := uint64(1) << bits.Len64(2*window-1) // the power of two at or above 2·window
	if half := (g - floor) / 2; half > period {
		period = uint64(1) << (bits.Len64(half) - 1)
	}
	return g%period == 0
}

// StartSweep starts the sweep when the commit accepted at generation
// g (of state) is the one the rule picks; one at a time per engine. Its
// outcome is only logged: garbage left behind is removed by a later
// sweep, and accepted state never depends on it.
func (b *Background) StartSweep(state publish.State, g uint64) {
	m := state.Manifest
	if m == nil || !sweepDue(g, remote.HistoryFloorV4(m, b.Window()), b.Window()) {
		return
	}
	if !b.cleaning.CompareAndSwap(false, true) {
		return
	}
	b.wg.Go(func() {
		defer b.cleaning.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		b.Sweep(ctx)
	})
}

// Sweep runs one sweep.
func (b *Background) Sweep(ctx context.Context) {
	res, err := b.Env.Notebook.CleanupV4(ctx, remote.CleanupV4Options{Window: b.Window(), RetainFor: b.Retain})
	if err != nil {
		b.Env.Log.Warn("cleanup stopped; unreferenced proposals and packs may remain", "deleted", len(res.Deleted), "err", err)
		return
	}
	b.Env.Log.Debug("cleanup done", "deleted", len(res.Deleted), "kept", res.Kept)
}
