package pstate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/slivingdoc/slivingdoc/remote"
)

// The highest generation seen. A store's generation only grows,
// so a `current` reporting a lower generation than this host has seen is a
// `current` restored from an older copy (or deleted): trusting it would
// make the next pull delete the newer files and the next commit reuse
// generations. P/stores/<key>/highest (a sealed record: Seal) records
// the highest generation any process of this P has read; every read of
// `current` (remote.Options.Observe) is checked against it before anything
// is merged or written, and a lower one refused (the engine reports it as
// STORAGE_INTEGRITY / GENERATION_REGRESSED). An absent `current` seen for the first time is
// checked against the store itself: increment packs above generation 1
// mean it was deleted.
//
// An operator restoring a backup on purpose removes the file on every host
// (docs/operations.md); the file is a cache of what was seen, never
// authority.

// Highest is the highest generation this host has seen of one store, and
// the check of every read of its `current` against it.
type Highest struct {
	mu      sync.Mutex
	highest uint64
	loaded  bool
	path    string
	store   remote.Store
	// Later, when set (a long-lived engine), runs the write of a higher
	// generation after the engine's reply: Observe checks against
	// the value in memory, and a crash before the write leaves the file a
	// generation behind, which only narrows the safeguard.
	Later   func(func())
	writeMu sync.Mutex // one write at a time, never a lower value after a higher
	written uint64     // the value last written by this process
}

func (g *Highest) load() {
	if g.loaded {
		return
	}
	g.loaded = true
	g.highest = g.readFile()
}

// Observe is the remote.Options.Observe check: it refuses a `current`
// whose generation is below the highest seen (remote.ErrGenerationRegressed)
// and records a higher one.
func (g *Highest) Observe(ctx context.Context, s remote.State) error {
	higher, err := g.check(ctx, s)
	if higher {
		g.recordSoon()
	}
	return err
}

// Learn records s's generation if it is higher than any seen, without
// the check: for a state read earlier (publish's, reported with an
// accepted commit), which may be older than what another process of this
// P has seen since without the store having gone back. Only a fresh read
// can tell a restored `current`; such a read goes through Observe.
func (g *Highest) Learn(s remote.State) {
	g.mu.Lock()
	g.load()
	higher := s.Generation() > g.highest
	if higher {
		g.highest = s.Generation()
	}
	g.mu.Unlock()
	if higher {
		g.recordSoon()
	}
}

// recordSoon writes the higher generation now in memory: after the
// engine's reply when Later is set, else at once.
func (g *Highest) recordSoon() {
	if g.Later != nil {
		g.Later(g.record)
		return
	}
	g.record()
}

// check refuses a regressed generation, and reports whether s's is higher
// than any seen (then it is the one in memory).
func (g *Highest) check(ctx context.Context, s remote.State) (higher bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.loaded {
		// Another process of this P may have seen more since.
		g.highest = max(g.highest, g.readFile())
	} else {
		g.load() // just read: not twice in a row
	}
	gen := s.Generation()
	switch {
	case gen < g.highest:
		return false, fmt.Errorf("%w: current is at generation %d, this host already saw generation %d", remote.ErrGenerationRegressed, gen, g.highest)
	case gen == 0 && g.highest == 0:
		// A new notebook, or a deleted `current`: packs above generation
		// 1 say which (a writer that crashed before its first replace
		// leaves generation 1's).
		objs, err := g.store.List(ctx, remote.IncrementsPrefix)
		if err != nil {
			return false, fmt.Errorf("remote: read current: list increments: %w", err)
		}
		var top uint64
		for _, o := range objs {
			if _, pg, _, err := remote.ParsePackKey(o.Key); err == nil {
				top = max(top, pg)
			}
		}
		if top <= 1 {
			// A store written by format v4 has no increment packs: its
			// proposals say the same, each built on a generation its
			// writer read (so one on G says G was there).
			props, err := g.store.List(ctx, remote.ProposalsPrefix)
			if err != nil {
				return false, fmt.Errorf("remote: read current: list proposals: %w", err)
			}
			for _, o := range props {
				if kind, pg, _, _, _ := remote.ParseProposalEntry(o.Key); kind == remote.EntryProposal && pg > 0 {
					top = max(top, pg+1)
				}
			}
		}
		if top > 1 {
			return false, g.absentWithPack(ctx, top)
		}
		return false, nil
	case gen > g.highest:
		g.highest = gen
		return true, nil
	}
	return false, nil
}

// absentWithPack decides what a `current` read absent means when the
// store, listed after that read, holds packs up to generation pg > 1. The
// list comes later than the read (and, for a first read of a store not
// yet named, after the read of its ID and the switch to it),
// so the first writers of a new store may have published generation 1
// and left generation 2's pack meanwhile. A `current`, once there, is
// never removed but by a deletion, so one still absent now was absent
// while the pack was there: deleted. One present now (at a generation the
// pack could follow) only means the absent read was overtaken, which the
// caller's conditional create shows like any stale read: nil.
func (g *Highest) absentWithPack(ctx context.Context, pg uint64) error {
	regressed := fmt.Errorf("%w: current is absent, but the store holds the pack of generation %d", remote.ErrGenerationRegressed, pg)
	data, _, err := g.store.Get(ctx, remote.CurrentKey)
	switch {
	case errors.Is(err, remote.ErrNotFound):
		return regressed
	case err != nil:
		return fmt.Errorf("remote: read current: %w", err)
	}
	m4, m, err := remote.DecodeCurrent(data)
	if err != nil {
		return fmt.Errorf("remote: read current: %w", err)
	}
	if m4 != nil {
		m = remote.ViewV4(m4)
	}
	if m.Generation+1 < pg {
		// Made again below the pack (deleted, then a first write).
		return regressed
	}
	return nil
}

// readFile returns the generation P's file records (0: none readable).
func (g *Highest) readFile() uint64 {
	data, err := os.ReadFile(g.path)
	if err != nil {
		return 0
	}
	f, ok := Unseal(data, 1)
	if !ok {
		return 0
	}
	v, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// record writes the highest generation seen, unless a write of it (or of
// a higher one) was already made. A failure is ignored: the memory is a
// safeguard, and losing it must not fail reads.
func (g *Highest) record() {
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	g.mu.Lock()
	v := g.highest
	g.mu.Unlock()
	if v <= g.written || v <= g.readFile() { // another process may have recorded more
		return
	}
	if Overwrite(g.path, Seal(fmt.Sprintf("%020d", v))) == nil {
		g.written = v
	}
}

// NewHighest is the highest generation recorded in storeDir (P/stores/<key>)
// for store.
func NewHighest(storeDir string, store remote.Store) *Highest {
	return &Highest{path: filepath.Join(storeDir, "highest"), store: store}
}
