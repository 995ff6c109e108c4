package objcache

import (
	"context"
	"errors"
	"slices"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Base content missing from the cache. The merge base A is an accepted
// head, so its content came from the store; the object cache only keeps a
// copy (the chain cache A was synchronised in, pinned by prune.go). That
// copy can go: healing drops a damaged bundle whole, an operator clears
// P/stores, a full disk kept a pack only partly. A cache is a cache, so a
// base object found in no cache is fetched again from the store:
//
//	current ─Chains─▶ basePlan: the chain covering A's generation (its
//	  checkpoint pack, then its increments down from A's generation), then
//	  the increments after it (a base rolled forward or with an adopted
//	  publication holds content published later) ─▶ fetched in batches
//	  into the chain's cache, which Source reads as a fallback, until
//	  the object reads
//
// A chain whose checkpoint the store no longer keeps (Partial) is walked
// back increment by increment; the object is there if the publication that
// introduced it is still retained. When the store holds it nowhere
// (cleanup under retention dropped it), FetchBase says so, and the engine
// decides what that means for the directory.

// baseFetchBatch is how many packs one step of the walk fetches.
const baseFetchBatch = 16

// FetchBase reads object id, content of the merge base at generation
// gen, through src after fetching the store's packs that may hold it;
// false (and no error) when the store holds it nowhere either. fetched
// records the pack keys fetched so far (by pack key, across calls of one
// operation), which are not fetched again. A failure to fetch a pack is a
// *FetchError.
func (cs *Caches) FetchBase(ctx context.Context, src *Source, id cas.ID, gen uint64, fetched map[string]bool) ([]byte, bool, error) {
	read := func() ([]byte, error) {
		src.Rescan()
		return cas.ReadFile(src, id)
	}
	state, err := cs.notebook.ReadCurrent(ctx)
	if err != nil {
		return nil, false, err
	}
	chains, err := cs.baseChains(ctx, state)
	if err != nil {
		return nil, false, err
	}
	for _, step := range basePlan(chains, gen, state.Manifest.Version) {
		for refs := step.refs; len(refs) > 0; {
			n := min(baseFetchBatch, len(refs))
			if err := cs.fetchBasePacks(ctx, state, step.key, refs[:n], fetched); err != nil {
				return nil, false, err
			}
			refs = refs[n:]
			if data, err := read(); err == nil {
				cs.log.Info("base content missing from the object cache was fetched again from the store")
				return data, true, nil
			} else if !errors.Is(err, cas.ErrNotFound) {
				return nil, false, err
			}
		}
	}
	return nil, false, nil
}

// baseChains lists the chains whose packs may hold base content. A
// version-4 `current` lists its whole history, but a sweep deletes what
// lies below its oldest listed checkpoint (with the segments that index
// it): there only the retained history is read, so base content that went
// with the rest is BASELINE_LOST, not a manifest naming missing segments.
func (cs *Caches) baseChains(ctx context.Context, state remote.State) ([]remote.Chain, error) {
	if state.Manifest == nil || state.Manifest.V4 == nil {
		return cs.notebook.Chains(ctx, state)
	}
	ret, err := cs.notebook.Retention(ctx, state)
	if err != nil {
		return nil, err
	}
	return cs.notebook.ChainsAbove(ctx, state, ret.Floor)
}

// baseStep is packs to fetch into the cache named key.
type baseStep struct {
	key  string
	refs []remote.PackRef
}

// basePlan orders the packs that may hold content of the merge base at
// generation gen (chains as remote.Notebook.Chains lists them, active
// first). First the chain covering gen: its checkpoint (it alone holds
// the whole closure at its generation), then its increments at or below
// gen, newest first (the newer, the likelier to have introduced a version
// current at gen). Then the increments above gen, oldest first: a base
// rolled forward from an interrupted operation's record, or with an
// adopted publication applied, holds content first published after gen.
func basePlan(chains []remote.Chain, gen uint64, version int) []baseStep {
	keyOf := func(c remote.Chain) string {
		if version < 2 {
			return KeyOf(c)
		}
		return KeyAt(c.Checkpoint)
	}
	var plan []baseStep
	for _, c := range chains {
		if c.Checkpoint.Through > gen {
			continue
		}
		var refs []remote.PackRef
		if !c.Partial && !c.Checkpoint.IsGenesis() {
			refs = append(refs, c.Checkpoint.Pack)
		}
		for i := len(c.Increments) - 1; i >= 0; i-- {
			if inc := c.Increments[i]; inc.Generation <= gen {
				refs = appendIncrementPacks(refs, inc)
			}
		}
		if len(refs) > 0 {
			plan = append(plan, baseStep{keyOf(c), refs})
		}
		break // older chains end below gen
	}
	for i := len(chains) - 1; i >= 0; i-- {
		c := chains[i]
		var refs []remote.PackRef
		for _, inc := range c.Increments {
			if inc.Generation > gen {
				if len(refs) == 0 && c.Checkpoint.Through > gen && !c.Checkpoint.IsGenesis() {
					// A version-4 increment stores its trees as deltas of
					// the trees before it: its chain's checkpoint first.
					refs = append(refs, c.Checkpoint.Pack)
				}
				refs = appendIncrementPacks(refs, inc)
			}
		}
		if len(refs) > 0 {
			plan = append(plan, baseStep{keyOf(c), refs})
		}
	}
	return plan
}

// appendIncrementPacks appends inc's packs to refs: its own and (format
// v4, re-parented by a fold) its group pack, unless just listed.
func appendIncrementPacks(refs []remote.PackRef, inc remote.Increment) []remote.PackRef {
	refs = append(refs, inc.Pack)
	if inc.Group.Key != "" && !slices.ContainsFunc(refs, func(r remote.PackRef) bool { return r.Key == inc.Group.Key }) {
		refs = append(refs, inc.Group)
	}
	return refs
}

// fetchBasePacks keeps refs in the cache named key, skipping those held
// already or in fetched (fetched earlier in this operation); a pack the store no longer
// has (cleanup) is skipped too: the walk goes on with the others. A
// version-4 proposal stores its trees as deltas of the trees of the
// generation it was built on, which the cache need not hold: those
// generations' packs are fetched with it (withProposalBases), or the
// cache would refuse the pack.
func (cs *Caches) fetchBasePacks(ctx context.Context, state remote.State, key string, refs []remote.PackRef, fetched map[string]bool) error {
	c, err := cs.Open(key)
	if err != nil {
		return err
	}
	if err := c.store.Refresh(); err != nil {
		return err
	}
	fetch := func(refs []remote.PackRef) ([]remote.CaughtUpPack, error) {
		var got []remote.CaughtUpPack
		for _, ref := range MissingPacks(c.store, refs) {
			if fetched[ref.Key] {
				continue
			}
			fetched[ref.Key] = true
			data, err := cs.notebook.FetchPack(ctx, ref)
			if errors.Is(err, remote.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, &FetchError{err}
			}
			got = append(got, remote.CaughtUpPack{Key: ref.Key, Data: data})
		}
		return got, nil
	}
	got, err := fetch(refs)
	if err != nil {
		return err
	}
	fetchGen := func(g uint64) ([]remote.CaughtUpPack, error) {
		incs, err := cs.notebook.Publications(ctx, state, g, g)
		if errors.Is(err, remote.ErrNotFound) {
			return nil, nil // swept with the history below the floor
		}
		if err != nil {
			return nil, err
		}
		return fetch(remote.Chain{Increments: incs}.Packs())
	}
	if got, err = withProposalBases(got, map[cas.ID]bool{}, c.store.Has, fetchGen); err != nil {
		return err
	}
	// A pack whose bases are gone with the swept history is left out, like
	// a pack gone itself: what only it held is then base content lost.
	got = arrived(got, c.store.Has)
	named := make([]cas.NamedPack, len(got))
	for i, pk := range got {
		named[i] = cas.NamedPack{Name: PackName(remote.PackRef{Key: pk.Key}), Data: pk.Data}
	}
	return c.store.AddPacks(named)
}
