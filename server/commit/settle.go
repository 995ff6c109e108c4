package commit

import (
	"context"
	"errors"
	"strings"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/dircall"
)

// A pull settles an undecided version-4 call before anything else
// (docs/publication.md §5.8). A commit whose process died after it
// registered a version leaves a pending record naming the call's ID; the
// version stays foldable for K generations, and any writer's fold may
// accept it. Were the pull to drop the record (its baseline moving on
// drops it), a later acceptance would reach the directory as someone
// else's change, its own text on both sides of the next merge. So the
// pull finishes the call first, as the next commit would
// (publish.Publisher.Resume under the same ID), with one difference: it
// never builds a new version. Either
//
//   - the call is accepted (found in `current` or its history, or folded
//     now, by another writer or by this pull): the pull's merge adopts it
//     as common ground, and the directory holds the accepted text; or
//   - no version of it can be folded any more (declined, K generations
//     behind, or never stored): nothing of it can ever be accepted, so
//     the entry is dropped, and its text stays in the directory as a
//     local edit, published by the next commit.
//
// Nothing new is published: the version was registered by the commit the
// user asked for; the pull only completes it. The text is never lost: it
// is either accepted or still in the directory.

// errNotRebuilt ends a settling call where it would build a new version.
var errNotRebuilt = errors.New("server: a pull does not build a new version")

// SettleV4 settles the undecided call the pending record of call c
// names, if any; a pull runs it before anything else. A store error is
// the pull's: the record stays for the next call.
func SettleV4(c *dircall.Call, p *Publishing) error {
	s := &call{Call: c, p: p}
	ent, ok := s.Pending.Undecided(s.Base)
	if !ok {
		return nil
	}
	id, last := ent.Publication, max(ent.Last, ent.First)
	pub, err := s.p.publisher(s.Ctx)
	if err != nil {
		return s.Env.Fail("publish", err)
	}
	notRebuilt := func(context.Context, publish.State) (publish.Change, error) {
		return publish.Change{}, errNotRebuilt
	}
	// Resume looks for the ID above last only: a proposer registers a
	// version only after finding its ID in no generation, and it builds
	// a new one only when the one before can no longer be folded, or was
	// shadowed by it (a fold folds the newest version of an ID). The
	// exception: the record is written before its version is stored, so
	// a call that died in between may have left an older version the
	// newest no longer shadows; Resume is then asked about that one.
	for {
		_, err = pub.Resume(s.Ctx, id, last, notRebuilt)
		if !errors.Is(err, errNotRebuilt) {
			break
		}
		g, ok, ferr := s.foldableVersion(id, last)
		if ferr != nil {
			return s.Env.Fail("publish", ferr)
		}
		if !ok {
			s.Env.Log.Info("a publication interrupted after it registered can no longer be accepted; its text stays in the directory", "publication", id)
			s.Pending.Forget(id)
			return nil
		}
		last = g
	}
	if err != nil {
		return s.Env.Fail("publish", err)
	}
	s.Env.Log.Info("a pull completed a publication interrupted after it registered", "publication", id)
	return nil // accepted: the merge adopts it (pending.Tracker.Adopt)
}

// foldableVersion returns the newest version of id built below before
// that a fold could still take (fewer than K generations behind
// `current`, not declined), if any.
func (s *call) foldableVersion(id string, before uint64) (uint64, bool, error) {
	state, err := s.Env.Notebook.ReadCurrent(s.Ctx)
	if err != nil {
		return 0, false, err
	}
	m := state.Manifest
	if m == nil || m.V4 == nil {
		return 0, false, nil // not version 4 yet: nothing of it was ever foldable
	}
	k := uint64(s.p.Opts.K)
	if k == 0 {
		k = publish.DefaultK
	}
	from := uint64(0)
	if m.Generation >= k {
		from = m.Generation - k + 1
	}
	objs, err := remote.ListAfter(s.Ctx, s.Env.Store, remote.ProposalsPrefix, strings.TrimSuffix(remote.ProposalKey(from, ""), "-"))
	if err != nil {
		return 0, false, err
	}
	var newest uint64
	found := false
	for _, o := range objs {
		kind, g, pid, _, _ := remote.ParseProposalEntry(o.Key)
		if kind == remote.EntryProposal && pid == id && g >= from && g < before && !m.V4.IsDeclined(g, id) {
			newest, found = max(newest, g), true
		}
	}
	return newest, found, nil
}
