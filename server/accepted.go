package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A commit that a fold re-parented ends with L holding the tree of its
// own generation g, which may lie below the head of the state it learned
// the acceptance from (others' groups accepted since). The object cache
// holds the closure of that state's head only: a catch-up through rollups
// or a checkpoint skips the generations in between, so g's commit, its
// re-parented trees and any file replaced since may be absent. The
// closure of g is the closure of the generation the commit was built on
// (G, which this directory's cache held when it built) and what the
// generations after it added, up to g: each generation's proposal and
// group pack (docs/storage.md §3C.6). acceptedObjects reads those packs,
// fetched only on a miss (g's own first: usually all that is missing),
// and kept in memory, not in the cache: a proposal's trees are deltas of
// the trees of the generation it was built on, which a cache started at
// a later checkpoint does not hold, so the cache would refuse the pack;
// read here, a delta's base is found in the caches or in the packs
// fetched beside it.

// acceptedObjects serves, after the caches (objectSource.more), the
// packs of generations (built, g] of state; when the caches lack the
// head at built (its chain's cache was removed since), the range starts
// at the newest retained checkpoint at or below built, whose pack is
// fetched too.
type acceptedObjects struct {
	ctx      context.Context
	e        *Engine
	state    remote.State
	caches   *objectSource
	built, g uint64

	stage int // fetches done: 0 none, 1 g's packs, 2 (built, g), 3 from a checkpoint
	packs []*cas.Pack
	seen  map[string]bool
}

func (e *Engine) acceptedObjects(ctx context.Context, state remote.State, caches *objectSource, built, g uint64) *acceptedObjects {
	return &acceptedObjects{ctx: ctx, e: e, state: state, caches: caches, built: min(built, g), g: g, seen: map[string]bool{}}
}

func (a *acceptedObjects) Get(id cas.ID) (cas.Object, error) {
	for {
		for _, p := range a.packs {
			if o, err := p.Get(id); err == nil || !errors.Is(err, cas.ErrNotFound) {
				return o, err
			}
		}
		if a.stage == 3 {
			return cas.Object{}, fmt.Errorf("server: object %s of generation %d: %w", id, a.g, cas.ErrNotFound)
		}
		a.stage++
		if err := a.fetchStage(); err != nil {
			return cas.Object{}, errors.Join(cas.ErrNotFound, err)
		}
	}
}

func (a *acceptedObjects) fetchStage() error {
	from, to := a.g, a.g
	var extra []remote.PackRef
	switch a.stage {
	case 2:
		from, to = a.built+1, a.g-1
	case 3:
		// The caches lack the closure of built: start from the newest
		// checkpoint at or below it that `current` still names.
		if m := a.state.Manifest; m != nil {
			if head, ok := a.headAt(a.built); ok {
				if _, err := a.caches.Get(head); err == nil {
					return nil
				}
			}
			var best *remote.Checkpoint
			for _, cp := range append([]remote.Checkpoint{m.Checkpoint}, m.Checkpoints...) {
				if !cp.IsGenesis() && cp.Through <= a.built && (best == nil || cp.Through > best.Through) {
					best = &cp
				}
			}
			lo := uint64(0)
			if best != nil {
				lo = best.Through
				extra = append(extra, best.Pack)
			}
			from, to = lo+1, a.built
		}
	}
	var refs []remote.PackRef
	if from <= to {
		incs, err := a.e.notebook.Publications(a.ctx, a.state, from, to)
		if err != nil {
			return err
		}
		refs = remote.Chain{Increments: incs}.Packs()
	}
	for _, ref := range append(extra, refs...) {
		if a.seen[ref.Key] {
			continue
		}
		a.seen[ref.Key] = true
		data, err := a.e.notebook.FetchPack(a.ctx, ref)
		if err != nil {
			return err
		}
		p, err := cas.OpenPack(data)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", remote.ErrCorruptPack, ref.Key, err)
		}
		// A delta's base: in the caches, or (through their more, this
		// source) in a pack fetched beside it.
		a.packs = append(a.packs, p.WithBases(a.caches))
	}
	return nil
}

// headAt returns the head accepted at generation g of the state.
func (a *acceptedObjects) headAt(g uint64) (cas.ID, bool) {
	incs, err := a.e.notebook.Publications(a.ctx, a.state, g, g)
	if err != nil || len(incs) == 0 {
		return cas.ID{}, false
	}
	return incs[len(incs)-1].Head, true
}
