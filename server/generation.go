package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Generation memory (issue 14, item 3). A store's generation only grows,
// so a `current` reporting a lower generation than this host has seen is a
// `current` restored from an older copy (or deleted): trusting it would
// make the next pull delete the newer files and the next commit reuse
// generations. P/stores/<key>/highest records the highest generation any
// process of this P has read; every read of `current` (remote.Options.
// Observe) is checked against it before anything is merged or written, and
// refused with STORAGE_INTEGRITY / GENERATION_REGRESSED. An absent
// `current` seen for the first time is checked against the store itself:
// increment packs above generation 1 mean it was deleted.
//
// An operator restoring a backup on purpose removes the file on every host
// (docs/operations.md); the file is a cache of what was seen, never
// authority.

type generationMemory struct {
	mu      sync.Mutex
	highest uint64
	loaded  bool
	path    string
	store   remote.Store
}

func (g *generationMemory) load() {
	if g.loaded {
		return
	}
	g.loaded = true
	if data, err := os.ReadFile(g.path); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64); err == nil {
			g.highest = v
		}
	}
}

// observe is the remote.Options.Observe hook.
func (g *generationMemory) observe(ctx context.Context, s remote.State) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.load()
	// Another process of this P may have seen more since.
	if data, err := os.ReadFile(g.path); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64); err == nil && v > g.highest {
			g.highest = v
		}
	}
	gen := s.Generation()
	switch {
	case gen < g.highest:
		return fmt.Errorf("%w: current is at generation %d, this host already saw generation %d", remote.ErrGenerationRegressed, gen, g.highest)
	case gen == 0 && g.highest == 0:
		// A new notebook, or a deleted `current`: packs above generation
		// 1 say which (a writer that crashed before its first replace
		// leaves generation 1's).
		objs, err := g.store.List(ctx, remote.IncrementsPrefix)
		if err != nil {
			return fmt.Errorf("remote: read current: list increments: %w", err)
		}
		for _, o := range objs {
			if _, pg, _, err := remote.ParsePackKey(o.Key); err == nil && pg > 1 {
				return fmt.Errorf("%w: current is absent, but the store holds the pack of generation %d", remote.ErrGenerationRegressed, pg)
			}
		}
		return nil
	case gen > g.highest:
		g.highest = gen
		if err := writeReplace(g.path, []byte(strconv.FormatUint(gen, 10)+"\n"), false); err != nil {
			return nil // the memory is a safeguard; losing it must not fail reads
		}
	}
	return nil
}

func newGenerationMemory(storeDir string, store remote.Store) *generationMemory {
	return &generationMemory{path: filepath.Join(storeDir, "highest"), store: store}
}
