package objcache

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A commit that a fold re-parented ends with L holding the tree of its
// own generation g, which may lie below the head of the state it learned
// the acceptance from (others' groups accepted since). The object cache
// holds the closure of that state's head only: a catch-up through a
// rollup block or a checkpoint past g skips g itself, so g's commit, its
// re-parented trees and any file replaced since may be absent. The
// closure of g is the closure of the generation G the commit was built
// on, and what each generation after it added up to g, in its proposal
// and its group pack (docs/publication.md, invariant 11). The caches hold
// G's closure: this directory's cache reached G when it built, and the
// cache of a chain at or after the oldest baseline's is never removed
// (prune.go). Accepted reads those packs, fetched on a miss only:
// g's own first (usually all that is missing), then those of G+1 … g−1.
// They are read in memory, not added to the cache: a proposal's trees
// are deltas of the trees of the generation it was built on, which a
// cache started at a later checkpoint may not hold, and the cache
// refuses a pack whose bases it cannot read.

// acceptedObjects serves, after the caches (Source.More), the
// packs of generations (built, g] of state.
type acceptedObjects struct {
	ctx      context.Context
	notebook *remote.Notebook
	state    remote.State
	caches   *Source
	built, g uint64

	stage int // fetches done: 0 none, 1 g's packs, 2 those of (built, g)
	packs []*cas.Pack
	seen  map[string]bool // pack keys fetched
}

// Accepted returns the objects of a commit accepted at generation g of
// state and built on generation built, read after caches (set it as
// their More): the packs of generations (built, g], fetched on a miss.
func (cs *Caches) Accepted(ctx context.Context, state remote.State, caches *Source, built, g uint64) cas.Source {
	return &acceptedObjects{ctx: ctx, notebook: cs.notebook, state: state, caches: caches, built: min(built, g), g: g, seen: map[string]bool{}}
}

func (a *acceptedObjects) Get(id cas.ID) (cas.Object, error) {
	for {
		for _, p := range a.packs {
			if o, err := p.Get(id); err == nil || !errors.Is(err, cas.ErrNotFound) {
				return o, err
			}
		}
		if a.stage == 2 {
			return cas.Object{}, fmt.Errorf("server: object %s of generation %d: %w", id, a.g, cas.ErrNotFound)
		}
		a.stage++
		if err := a.fetchStage(); err != nil {
			return cas.Object{}, err // the store's trouble, not a missing object
		}
	}
}

// fetchStage fetches the packs of the next stage.
func (a *acceptedObjects) fetchStage() error {
	from, to := a.g, a.g
	if a.stage == 2 {
		from, to = a.built+1, a.g-1
	}
	if from > to {
		return nil
	}
	incs, err := a.notebook.Publications(a.ctx, a.state, from, to)
	if err != nil {
		return err
	}
	// One group pack may serve g and the generations before it: fetched
	// once.
	refs := slices.DeleteFunc(remote.Chain{Increments: incs}.Packs(), func(r remote.PackRef) bool { return a.seen[r.Key] })
	for _, r := range refs {
		a.seen[r.Key] = true
	}
	got := make([]*cas.Pack, len(refs))
	err = parallel.For(len(refs), fetchParallel, func(i int) error {
		data, err := a.notebook.FetchPack(a.ctx, refs[i])
		if err != nil {
			return err
		}
		p, err := cas.OpenPack(data)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", remote.ErrCorruptPack, refs[i].Key, err)
		}
		// A delta's base: in the caches, or (through their more, this
		// source) in a pack fetched beside it.
		got[i] = p.WithBases(a.caches)
		return nil
	})
	for _, p := range got {
		if p != nil {
			a.packs = append(a.packs, p)
		}
	}
	return err
}
