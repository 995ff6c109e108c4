package server

import (
	"errors"
	"fmt"
	"os"
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
//	  into the chain's cache, which objectSource reads as a fallback, until
//	  the object reads
//
// A chain whose checkpoint the store no longer keeps (Partial) is walked
// back increment by increment; the object is there if the publication that
// introduced it is still retained. When the store holds it nowhere
// (cleanup under retention dropped it), the local edits of that file
// cannot be told from others' changes: the call is refused with
// BASELINE_LOST and nothing in L changes (the merge runs before the
// rewrite). The baseline is set aside (P/dirs/<h>/baseline-unusable), so
// the directory is in the lost-baseline state of session.begin and the way
// out that reason documents ends it: a pull adopts the directory as one
// without a record (unknown.go).

// baseFetchBatch is how many packs one step of the walk fetches.
const baseFetchBatch = 16

// refetchBase reads base object id after fetching the store's packs that
// may hold it. It returns a BASELINE_LOST refusal when id is base content
// the store no longer holds either, and cas.ErrNotFound when id is not
// base content at all (the caller's own reporting applies).
func (s *session) refetchBase(id cas.ID) ([]byte, error) {
	if s.base == nil || s.src == nil {
		return nil, cas.ErrNotFound
	}
	paths := s.basePathsOf(id)
	if len(paths) == 0 {
		return nil, cas.ErrNotFound
	}
	if s.baseFetched == nil {
		s.baseFetched = map[string]bool{}
	}
	read := func() ([]byte, error) {
		s.src.rescan()
		return cas.ReadFile(s.src, id)
	}
	state, err := s.e.notebook.ReadCurrent(s.ctx)
	if err != nil {
		return nil, err
	}
	chains, err := s.baseChains(state)
	if err != nil {
		return nil, err
	}
	for _, step := range basePlan(chains, s.base.Generation, state.Manifest.Version) {
		for refs := step.refs; len(refs) > 0; {
			n := min(baseFetchBatch, len(refs))
			if err := s.fetchBasePacks(state, step.key, refs[:n]); err != nil {
				return nil, err
			}
			refs = refs[n:]
			if data, err := read(); err == nil {
				s.e.log.Info("base content missing from the object cache was fetched again from the store")
				return data, nil
			} else if !errors.Is(err, cas.ErrNotFound) {
				return nil, err
			}
		}
	}
	if s.probing {
		return nil, cas.ErrNotFound // a decision's read (holdsRewrite): no verdict on the baseline
	}
	s.e.log.Warn("base content is in no cache and no longer in the store; the baseline is set aside", "path", paths[0])
	// From now on the directory is in the lost-baseline state: a commit
	// is refused the same way, and a pull adopts the directory as one
	// without a record (the documented way out). The baseline is kept
	// beside, for an operator.
	if err := os.Rename(s.state.File("baseline"), s.state.File("baseline-unusable")); err != nil {
		s.e.log.Warn("cannot set the unusable baseline aside", "err", err)
	}
	msg := fmt.Sprintf("The base of %s (the version this directory last synchronised, which its local edits are measured against) is no longer in the private cache nor in the store, so its local edits cannot be told from others' changes; nothing was changed. Pull the directory: files equal to the notebook's are adopted, differing ones become conflict blocks keeping both texts.", paths[0])
	return nil, newError(CodeEngineFailed, ReasonBaselineLost, msg, cas.ErrNotFound)
}

// baseChains lists the chains whose packs may hold base content. A
// version-4 `current` lists its whole history, but a sweep deletes what
// lies below its oldest listed checkpoint (with the segments that index
// it): there only the retained history is read, so base content that went
// with the rest is BASELINE_LOST, not a manifest naming missing segments.
func (s *session) baseChains(state remote.State) ([]remote.Chain, error) {
	if state.Manifest == nil || state.Manifest.V4 == nil {
		return s.e.notebook.Chains(s.ctx, state)
	}
	ret, err := s.e.notebook.Retention(s.ctx, state)
	if err != nil {
		return nil, err
	}
	return s.e.notebook.ChainsAbove(s.ctx, state, ret.Floor)
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
			return chainKeyOf(c)
		}
		return chainKeyAt(c.Checkpoint)
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
// already or fetched earlier in this session; a pack the store no longer
// has (cleanup) is skipped too: the walk goes on with the others. A
// version-4 proposal stores its trees as deltas of the trees of the
// generation it was built on, which the cache need not hold: those
// generations' packs are fetched with it (withProposalBases), or the
// cache would refuse the pack.
func (s *session) fetchBasePacks(state remote.State, key string, refs []remote.PackRef) error {
	c, err := s.e.openChain(key)
	if err != nil {
		return err
	}
	if err := c.store.Refresh(); err != nil {
		return err
	}
	fetch := func(refs []remote.PackRef) ([]remote.CaughtUpPack, error) {
		var got []remote.CaughtUpPack
		for _, ref := range missingPacks(c.store, refs) {
			if s.baseFetched[ref.Key] {
				continue
			}
			s.baseFetched[ref.Key] = true
			data, err := s.e.notebook.FetchPack(s.ctx, ref)
			if errors.Is(err, remote.ErrNotFound) {
				continue
			}
			if err != nil {
				s.e.storeTrouble(err)
				return nil, packErr(err)
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
		incs, err := s.e.notebook.Publications(s.ctx, state, g, g)
		if errors.Is(err, remote.ErrNotFound) {
			return nil, nil // swept with the history below the floor
		}
		if err != nil {
			return nil, err
		}
		return fetch(remote.Chain{Increments: incs}.Packs())
	}
	if got, err = s.e.withProposalBases(got, map[cas.ID]bool{}, c.store.Has, fetchGen); err != nil {
		return err
	}
	// A pack whose bases are gone with the swept history is left out, like
	// a pack gone itself: what only it held is then base content lost.
	got = arrived(got, c.store.Has)
	named := make([]cas.NamedPack, len(got))
	for i, pk := range got {
		named[i] = cas.NamedPack{Name: packName(remote.PackRef{Key: pk.Key}), Data: pk.Data}
	}
	return c.store.AddPacks(named)
}

func (s *session) basePathsOf(id cas.ID) []string {
	var out []string
	for p, b := range s.baseFiles() {
		if b == id {
			out = append(out, p)
		}
	}
	return out
}

// rescan makes the source look at every chain cache again (one may have
// been created since it first fell back to them).
func (s *objectSource) rescan() {
	s.scanned, s.others = false, nil
}
