package commit

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/server/dircall"
)

// Background is an engine's work after its accepted commits: rollups,
// checkpoints and sweeps. Its exported fields are set once, before the
// first commit, and not changed while work runs.
type Background struct {
	// Env is the engine's, of which the work uses the notebook, the
	// object caches, the log and the catch-up (Env.Sync, which maps its
	// failures and forgets the probe's verdict on store trouble).
	Env *dircall.Env
	// Retain is the history window by time a sweep keeps
	// (remote.CleanupV4Options.RetainFor: 0, none).
	Retain time.Duration
	// CheckpointPacks is the active-chain length that makes a
	// generation due for a checkpoint.
	CheckpointPacks int
	// K and M are publish's (publish.Options; 0: its defaults): the
	// window a sweep leaves alone is K + M generations.
	K, M int

	cleaning atomic.Bool    // a sweep is running (cleanup.go)
	rollupMu sync.Mutex     // one rollup build at a time
	wg       sync.WaitGroup // the work started; Wait waits for it
}

// Wait returns once the work started so far has ended: a CLI process
// finishes the work it started before it exits.
func (b *Background) Wait() { b.wg.Wait() }

// Window is K + M of publish's options, the defaults for those left 0.
func (b *Background) Window() uint64 {
	k, m := b.K, b.M
	if k <= 0 {
		k = publish.DefaultK
	}
	if m <= 0 {
		m = publish.DefaultM
	}
	return uint64(k + m)
}
