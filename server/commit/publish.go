package commit

import (
	"context"
	"errors"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/author"
	"github.com/slivingdoc/slivingdoc/server/build"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/pull"
	"github.com/slivingdoc/slivingdoc/server/rewrite"
	"github.com/slivingdoc/slivingdoc/server/storeview"
)

// Publication by format version 4 (docs/publication.md): the engine's
// half of package publish. publish runs the protocol (register the
// change as a proposal, fold, wait, one conditional write per group); the
// engine supplies:
//
//   - Build: the commit's attempt (server/build) on the state
//     publish read: merge L with its head, the tree, a head commit with
//     the call's publication ID, and the pack of what that head adds. It
//     is called again when a fold declines the version (it conflicted
//     with the group ahead of it) or the window passed it: the attempt is
//     rebuilt on the newer state, and a merge conflict there ends the
//     call with conflict blocks in L, as a version-3 commit's does.
//   - Objects: the object cache, caught up to the state (sync).
//   - Clock: the real clock (or the engine's configured Sleep and Now:
//     Options): the only wall time.
//
// The pending record (server/pending) is written before each version is
// registered; it names the publication ID and the generation the first
// version was built on, so an engine that died after registering resumes
// the same call (Publisher.Resume) at its next commit: the ID is accepted
// at most once, whoever folds it.
//
// The commit reports its own generation (publish.Result), not its
// group's last, and L ends holding that generation's tree: the change
// itself when the fold took it as built, or the fold's re-parented tree
// (others' changes folded before it included, as "brought in") when not.

// v4Call is a version-4 publication in progress.
type v4Call struct {
	first     uint64 // the generation the first version was built on
	last      uint64 // the generation the newest version was built on (settle.go)
	built     bool   // a version was handed to publish to register
	published bool   // accepted (finishV4 ran)
}

// errNothingToPublish ends a version-4 call whose build found the merge
// equal to the state it read: nothing was registered.
var errNothingToPublish = errors.New("server: nothing to publish")

// Publishing is what the engine hands every commit (and a pull's
// settling of an undecided call) to publish with: made once when the
// engine is, never changed after (the values it points to keep their own
// locks).
type Publishing struct {
	Env *dircall.Env
	// Opts are publish's options (Options) but for the store ID and the
	// objects, which publisher sets for each call.
	Opts publish.Options
	// Timing learns the store's estimates from its requests and times
	// publish's waits by them (server/storeview); nil: configured.
	Timing     *storeview.Timing
	Background *Background // the work an accepted commit leaves behind it
	// Later, when set (a long-lived engine: storeview.AfterReply's
	// Start), runs f after the call's reply: the engine's next call and
	// its Close wait for it. Nil: the call does that work before it
	// returns (a CLI process exits right after).
	Later func(f func())
}

// publisher returns a Publisher on the engine's store, named first if it
// has no ID yet (server/storeview): every version-4 `current` names the ID.
func (p *Publishing) publisher(ctx context.Context) (*publish.Publisher, error) {
	if err := p.Env.Ident.NameStore(ctx); err != nil {
		return nil, err
	}
	opts := p.Opts
	opts.Store = p.Env.Ident.ID()
	opts.Objects = func(ctx context.Context, st publish.State) (cas.Source, error) {
		state := stateView(st)
		c, err := p.Env.Sync(ctx, state)
		if err != nil {
			return nil, err
		}
		// On a miss, the packs of the window's generations (the fold
		// reads the trees its proposals were built on, which a catch-up
		// through rollups skips), not the whole chain.
		from := st.Generation() - min(st.Generation(), uint64(max(opts.K, publish.DefaultK)))
		return &refillSource{src: p.Env.Caches.Source(c), fill: func() error { return p.Env.Caches.FillFrom(ctx, state, c, from+1) }}, nil
	}
	store := p.Timing.Timed(&opts, p.Env.Store, p.Env.Ident.Dir()) // server/storeview
	return publish.New(store, opts)
}

// refillSource is the cache as the fold's objects: the fold reads the
// trees of recent generations' heads, which a cache caught up through
// rollups (version 3's before the store's upgrade, or version 4's) may
// lack; on the first miss the packs of the window's generations are
// fetched (objcache.Caches.FillFrom), once.
type refillSource struct {
	src    *objcache.Source
	fill   func() error
	filled bool
}

func (r *refillSource) Get(id cas.ID) (cas.Object, error) {
	o, err := r.src.Get(id)
	if err == nil || r.filled || !errors.Is(err, cas.ErrNotFound) {
		return o, err
	}
	r.filled = true
	if ferr := r.fill(); ferr != nil {
		return cas.Object{}, errors.Join(err, ferr)
	}
	r.src.Rescan()
	return r.src.Get(id)
}

// stateView is publish's read of `current` as the engine's readers take
// it: a version-4 `current` as its view, one of versions 1–3 as it is.
func stateView(st publish.State) remote.State {
	switch {
	case st.Old != nil:
		return remote.State{Manifest: st.Old, ETag: st.ETag}
	case st.Manifest != nil:
		return remote.State{Manifest: remote.ViewV4(st.Manifest), ETag: st.ETag}
	}
	return remote.State{}
}

// publishV4 is publish by version 4. A call whose reads met a pack gone
// from the store (a sweep deleted, below the history floor, what the
// `current` it read still named: remote/retain_v4.go) is made once more
// when `current` has moved on since, as a pull is (server/pull): the newer
// state no longer needs it. The second call resumes the first under its
// ID if it registered a version, so the commit is still accepted once.
func (s *call) publishV4(message string) (*dircall.Result, error) {
	res, err := s.publishV4From(message, true)
	var de *diag.Error
	if err == nil || !errors.As(err, &de) || de.Reason != diag.ReasonMissingPack || s.v4 == nil || s.v4.published {
		return res, err
	}
	if again, rerr := s.Env.Notebook.ReadCurrent(s.Ctx); rerr == nil && again.Generation() > s.v4.last {
		return s.publishV4From(message, true)
	}
	return res, err
}

// publishV4From is publishV4; mayResume: a call the pending record names
// is resumed first (false once it was).
func (s *call) publishV4From(message string, mayResume bool) (*dircall.Result, error) {
	pub, err := s.p.publisher(s.Ctx)
	if err != nil {
		return nil, s.Env.Fail("publish", err)
	}
	s.v4 = nil
	ent, resume := s.Pending.Undecided(s.Base)
	id, first := ent.Publication, ent.First
	resume = resume && mayResume
	if !resume {
		id = remote.NewUUIDv7()
	}
	var last *build.Attempt
	buildVersion := func(ctx context.Context, st publish.State) (publish.Change, error) {
		if last != nil {
			_ = last.WaitRecorded() // one record at a time: the last written is this version's
		}
		if s.v4 == nil {
			s.v4 = &v4Call{first: st.Generation()}
			if resume {
				s.v4.first = first
			}
		}
		s.v4.last = st.Generation()
		last = build.New(s.Call, ctx, stateView(st), id, message, build.V4{First: s.v4.first, Last: s.v4.last})
		skip, err := last.Run()
		if err != nil {
			return publish.Change{}, err
		}
		if skip {
			return publish.Change{}, errNothingToPublish
		}
		// The record is in P before the proposal is registered: from
		// then on any writer's fold may accept it.
		if err := last.WaitRecorded(); err != nil {
			return publish.Change{}, err
		}
		// Started after the record is written, not before: a goroutine
		// started just before this call blocked would run first on its
		// processor, and the baseline's encoding and checksum would
		// delay the record (about 0.3 ms at 1,000 files, every other
		// commit). It is still written while the proposal is.
		s.prepareBaseline(last)
		s.v4.built = true
		// The author is this commit's: a fold into another writer's
		// group copies it from the proposal into its increment.
		return publish.Change{Head: last.Head, Pack: last.Pack, Author: author.Of(ctx)}, nil
	}
	var res publish.Result
	if resume {
		res, err = pub.Resume(s.Ctx, id, first, buildVersion)
	} else {
		res, err = pub.CommitAfter(s.Ctx, id, s.State.LoadStreak(), buildVersion)
	}
	if last != nil {
		_ = last.WaitRecorded() // written before anything reads the call's record state
	}
	switch {
	case errors.Is(err, build.ErrConflict):
		return nil, s.materialiseConflict(last.Outcome)
	case errors.Is(err, errNothingToPublish):
		return s.finishUnchanged(last)
	case err != nil && s.Ctx.Err() != nil && s.v4 != nil && s.v4.built:
		// The caller stopped waiting (its deadline, a cancel) after the
		// change may have been registered: no count of lost writes ends
		// a call (a refused or rate-limited write re-reads and folds
		// again), and a registered proposal may still be accepted by
		// another writer's fold. The pending record keeps the call, so a
		// retry resumes it under the same ID and never publishes twice.
		return nil, diag.New(diag.CodeStorageFailure, diag.ReasonAcceptanceUnknown, "The commit stopped waiting before its change was accepted; another writer may still accept it. A retry is safe: it resumes the same change and never duplicates it.", err)
	case err != nil:
		return nil, s.Env.Fail("publish", err)
	case last == nil:
		// Resumed, and found accepted before anything was built: the
		// earlier call's change is in the store; L is brought up to date
		// as a pull would, taking it as common ground (server/pending).
		return s.resumedV4(res, message)
	}
	return s.finishV4(res, last)
}

// prepareBaseline starts writing, while the proposal is published, the
// baseline that accepting it would record when L itself is proposed: its
// generation follows the observed one, its tree is L's. Whatever an
// earlier attempt of the call prepared is discarded first.
func (s *call) prepareBaseline(a *build.Attempt) {
	s.prep.Discard()
	s.prep = nil
	if a.From == nil || a.From != s.Base || !s.Base.Exact() {
		return
	}
	s.prep = s.State.Prepare(&pstate.Baseline{Generation: a.Observed.Generation() + 1, Head: a.Head, Files: a.Merged.IDs})
}

// resumedV4 goes on after a resumed call that an earlier process's
// version made was found accepted: L is synchronised with the state that
// proved it (the record adopted: that change is common ground now), then
// what L holds beyond it (edits made since) is published as a call of
// its own. The result is that call's or, when nothing was left, the
// resumed call's: its own change at its generation, and what the
// synchronisation wrote into L as brought in.
func (s *call) resumedV4(res publish.Result, message string) (*dircall.Result, error) {
	s.Pending.Recheck()
	synced, conflicts, err := pull.SyncTo(s.Call, "commit", stateView(res.State))
	if err != nil {
		return nil, err
	}
	if len(conflicts) > 0 {
		return nil, pull.ConflictError(conflicts)
	}
	if _, err := s.ScanL(); err != nil {
		return nil, err
	}
	more, err := s.publishV4From(message, false)
	if err != nil || s.v4 != nil && s.v4.published {
		return more, err
	}
	// The result is the resumed call's: its own change at its own
	// generation; what the synchronisation wrote into L is others'.
	out := &dircall.Result{Path: s.Dir, Generation: res.Generation, Files: []dircall.FileStat{}, BroughtIn: synced.Files}
	if out.Files, err = ownChange(s.Src, res.Head); err != nil {
		// Accepted all the same: failing the call now would only make a
		// retry report nothing. The log says why the list is empty.
		s.Env.Log.Warn("cannot list the resumed commit's own change", "err", err)
		out.Files = []dircall.FileStat{}
	}
	return out, nil
}

// ownChange is the per-file delta the publication whose head commit is
// head made to its parent's tree.
func ownChange(src cas.Source, head cas.ID) ([]dircall.FileStat, error) {
	c, err := cas.ReadCommit(src, head)
	if err != nil {
		return nil, err
	}
	from, err := objcache.TreeOf(src, c.Parent)
	if err != nil {
		return nil, err
	}
	to, err := cas.ReadTree(src, c.Tree)
	if err != nil {
		return nil, err
	}
	return dircall.TreeDelta(src, from, to)
}

// finishV4 brings L and P up to date with the accepted generation
// res.Generation: L becomes its tree, the baseline records it.
func (s *call) finishV4(res publish.Result, last *build.Attempt) (*dircall.Result, error) {
	// Accepted: from here on, finish locally whatever the caller's context.
	s.Ctx = dircall.Detach(s.Ctx)
	s.Pending.Accept(last.Pend)
	s.v4.published = true
	s.State.SaveStreak(res.Streak)
	s.p.Background.StartSweep(res.State, res.Generation) // cleanup.go
	state := stateView(res.State)
	// The generation memory learns of the state (pstate.Highest), without
	// the check of a fresh read: publish read it earlier, and another
	// process of this P may have seen a later generation since.
	s.Env.Ident.Learn(state)
	s.keepRecent(last)
	flag := pstate.RecoveryFlag{Op: "commit", RemoteAccepted: "yes", Generation: res.Generation}
	if err := rewrite.Failpoint(rewrite.FailAfterPublish); err != nil {
		return nil, pull.RecoveryFailure(s.Call, flag, "publish", err)
	}
	asBuilt := res.Head == last.Head
	waitKept := func() {}
	later := asBuilt && s.p.Later != nil
	if asBuilt {
		// The cache's copy of the pack is written while the diffstat is
		// made and L and A are brought to the generation (a directory's
		// fsync): nothing of this call reads the cache for the pack's
		// objects, which its sources hold (the scan's content, the
		// recent contents). A long-lived engine writes it after the
		// call, whatever its outcome, as work after the reply (Later),
		// so it neither delays the reply nor competes with the finish
		// for the CPU; its next call waits for it before it begins, so
		// no call finds the cache without the pack. A crash loses only
		// the cache's copy, which the next sync downloads.
		kept := make(chan struct{})
		keep := func() {
			defer close(kept)
			s.keepOwnProposal(res, last)
		}
		waitKept = func() { <-kept }
		if later {
			defer s.p.Later(keep)
		} else {
			go keep()
			defer waitKept()
		}
	} else {
		// The catch-up below must find the pack in the cache.
		s.keepOwnProposal(res, last)
	}
	out := &dircall.Result{Path: s.Dir, Generation: res.Generation, Files: []dircall.FileStat{}}
	var err error
	if out.Files, err = s.diffstat(state, last.Outcome); err != nil {
		return nil, pull.RecoveryFailure(s.Call, flag, "diffstat", err)
	}
	target := last.Merged
	if !asBuilt {
		// A fold re-parented the change onto others' folded before it:
		// L becomes that generation's tree, from its group pack.
		chain, err := s.Env.Sync(s.Ctx, state)
		if err != nil {
			return nil, pull.RecoveryFailure(s.Call, flag, "rewrite", err)
		}
		s.Src = s.Env.Caches.Source(chain)
		// The generation the accepted version was built on: this
		// directory's cache held its closure then (objcache.Caches.Accepted).
		built := last.Observed.Generation()
		if inc, ok := res.State.Manifest.Increment(res.Generation); ok && inc.Publication == last.Publication {
			built = inc.Proposal
		}
		s.Src.More = s.Env.Caches.Accepted(s.Ctx, state, s.Src, built, res.Generation)
		files, err := objcache.TreeOf(s.Src, res.Head)
		if err != nil {
			return nil, pull.RecoveryFailure(s.Call, flag, "rewrite", err)
		}
		target = &plan.Merged{IDs: files}
	}
	if s.prep != nil {
		s.prep.Wait() // done reading target.ids before anything changes them
	}
	changes, err := s.Plan(target)
	if err != nil {
		return nil, pull.RecoveryFailure(s.Call, flag, "rewrite", err)
	}
	out.BroughtIn = dircall.Diffstat(changes)
	next := dirstate.NewBaseline(res.Generation, res.Head, target.IDs)
	if len(changes) == 0 && target == last.Merged {
		next.Prepared = s.prep // used only if it matches (pstate.Prepared)
	}
	if target == last.Merged && last.From != nil {
		next.Ignored, next.IgnoredKnown = last.From.IgnoredAfter(last.Changes, s.Env.IgnoredPath)
	}
	if err := pull.Materialise(s.Call, changes, flag, next, true); err != nil {
		var de *diag.Error
		if errors.As(err, &de) && de.Code != diag.CodeRecoveryFailure {
			return nil, pull.RecoveryFailure(s.Call, flag, "rewrite", err)
		}
		return nil, err
	}
	// The rollups' catch-up finds the pack in the cache.
	rollups := func() {
		waitKept()
		s.p.Background.StartRollups(state, res.Generation) // checkpoint.go
	}
	if later {
		s.p.Later(rollups)
	} else {
		rollups()
	}
	return out, nil
}

// keepOwnProposal adds the accepted proposal's pack to the cache, so no
// process on this host downloads what it just uploaded, and advances the
// cache's reach when the pack is all the generation added. A fold that
// re-parented the change still names the proposal in the generation
// (its group pack holds only the re-parented trees and commit): kept too,
// so the catch-up that follows does not fetch it back (it did, once per
// commit in a group, on SeaweedFS).
func (s *call) keepOwnProposal(res publish.Result, last *build.Attempt) {
	m := res.State.Manifest
	if m == nil {
		return
	}
	inc, ok := m.Increment(res.Generation)
	if !ok || inc.Publication != last.Publication || inc.Proposal != last.Observed.Generation() {
		return // accepted from another version than the last built
	}
	state := stateView(res.State)
	c, err := s.Env.Caches.Open(objcache.Key(state))
	if err == nil {
		err = c.Store().AddPack(objcache.PackName(remote.PackRef{Key: inc.ProposalKey()}), last.Pack)
	}
	if err != nil {
		s.Env.Log.Warn("cannot keep the published pack in the cache", "err", err)
		return
	}
	if c.Reach() == inc.Generation-1 && inc.Group == (remote.GroupRef{}) {
		c.SetReach(inc.Generation, inc.Head)
	}
}
