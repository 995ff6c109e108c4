package server

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// attempt is one version of a commit's change (publish_v4.go): built
// against one observed `current`, it merges, writes the pack and records
// the pending publication. publish calls the build once per version it
// registers (again after a decline, or when the window passed the
// version), and each call makes a new value, so nothing leaks from one
// version into the next.
//
//	run: observe -> merge (skip if nothing changed) -> syncChain ->
//	     writeFiles -> writeTree -> writeCommit -> record -> head, pack
//
// The pack holds every object the new head's closure has that the
// observed head's closure lacks (docs/storage.md §5, "the closure rule"):
// an object is left out only when it is certainly in the observed head's
// closure (a file of R, a chunk of R's version of the same path, a tree R
// reuses), never merely because the cache holds it. That is what lets a
// reader catch up through rollups without every increment.
type attempt struct {
	attemptResult
	s           *session
	ctx         context.Context
	publication string
	message     string

	chain   *objcache.Chain
	changes map[string]cas.ID // the paths that differ from R (zero ID: removed)
	sink    *objcache.Sink
	pend    pstate.PendingEntry
	rAll    map[cas.ID]bool // every file ID of R, built on first need
	head    cas.ID          // the proposal's head commit
	// recorded is closed once the pending record is written (recordErr
	// its outcome); nil when it was written before run returned.
	recorded  chan struct{}
	recordErr error
	// from is the baseline changes is the delta from, when the merge was
	// L itself (nil otherwise): the accepted tree is from + changes.
	from *dirstate.Baseline
}

func (s *session) newAttempt(ctx context.Context, observed remote.State, publication, message string) *attempt {
	return &attempt{attemptResult: attemptResult{observed: observed}, s: s, ctx: ctx, publication: publication, message: message}
}

// run builds the attempt's change (a.head, a.pack); skip when the merge
// is the observed state itself (nothing to publish). The pending record
// is written meanwhile: waitRecorded returns once it is.
func (a *attempt) run() (skip bool, err error) {
	if err := a.s.Env.Ident.NameStore(a.ctx); err != nil {
		// The first publication to a store names it (server/storeview).
		return false, err
	}
	if a.s.RecordOfAnotherStore() {
		return false, outlivedRecord() // remembered.go
	}
	if a.s.Base != nil && a.observed.Generation() < a.s.Base.Generation {
		// A state read from the store older than the baseline would
		// merge as if the remote had undone what the baseline holds:
		// the record is newer than the store (errRecordNewer,
		// remembered.go). The generation memory says first whether the
		// store itself went back (a restored `current`): then it is
		// GENERATION_REGRESSED, as on any read. (Only here: a state
		// publish read earlier may be older than what another engine of
		// this host has seen since, without the store going back.)
		if err := a.s.Env.Ident.Observe(a.ctx, a.observed); err != nil {
			return false, err
		}
		return false, fmt.Errorf("%w: generation %d is older than the baseline's %d", errRecordNewer, a.observed.Generation(), a.s.Base.Generation)
	}
	a.s.Base = a.s.Pending.Adopt(a.s.Ctx, a.s.Env.Notebook, a.s.Base, a.observed)
	if skip, err = a.merge(); err != nil || skip {
		return skip, err
	}
	if err := a.syncChain(); err != nil {
		return false, err
	}
	a.sink = objcache.NewSink(a.parentChunks(), true) // trees as deltas: only version-4 readers read a proposal's pack
	if err := a.writeFiles(); err != nil {
		return false, err
	}
	tree, err := a.s.writeTree(a.sink, a.chain.Store(), a.observed.Head(), a.merged.IDs, a.changes)
	if err != nil {
		return false, err
	}
	if a.head, err = a.writeCommit(tree); err != nil {
		return false, err
	}
	// The record must be in P before the proposal is registered (any
	// writer's fold may accept it from then on), not before the pack is
	// built: it is written meanwhile.
	a.recorded = make(chan struct{})
	go func() {
		defer close(a.recorded)
		a.recordErr = a.record()
	}()
	a.prepareBaseline()
	return false, nil
}

// merge decides the attempt's tree and its changes from R; skip when the
// result is R itself.
func (a *attempt) merge() (skip bool, err error) {
	s, observed := a.s, a.observed
	if observed.Head() == s.Base.Head && s.Base.Exact() {
		// R == A: the merge is L, and L's delta from A is found in one
		// pass over A's encoded entries (no map of A is built unless L
		// added paths). rFiles then holds only A's entries at the changed
		// paths: all the diffstat reads of the parent.
		a.merged = &plan.Merged{IDs: s.Scan.Files, Local: true}
		a.changes, a.rFiles = s.BaseDelta(true)
		a.from = s.Base
		return len(a.changes) == 0, nil
	}
	if err := a.syncChain(); err != nil {
		return false, err
	}
	if a.rFiles, err = objcache.TreeOf(s.Src, observed.Head()); err != nil {
		return false, err
	}
	if a.merged, err = s.MergeWith(observed.Head(), a.rFiles); err != nil {
		return false, err
	}
	if len(a.merged.Conflicts) > 0 {
		return false, errMergeConflict
	}
	a.changes = changedPaths(a.rFiles, a.merged.IDs)
	return len(a.changes) == 0, nil
}

// syncChain makes the cache hold the observed head's closure (once).
func (a *attempt) syncChain() error {
	if a.chain != nil {
		return nil
	}
	chain, err := a.s.e.sync(a.ctx, a.observed)
	if err != nil {
		return err
	}
	a.chain = chain
	a.s.Src = a.s.Env.Caches.Source(chain)
	return nil
}

// inR reports whether file ID id is certainly in R's closure: a file of R
// (any path). The set is built only when the cache holds id at all.
func (a *attempt) inR(id cas.ID) bool {
	if !a.chain.Store().Has(id) {
		return false
	}
	if a.rAll == nil {
		files := a.rFiles
		if a.merged.Local && a.observed.Head() == a.s.Base.Head {
			files = a.s.BaseFiles() // rFiles holds only the changed paths
		}
		a.rAll = make(map[cas.ID]bool, len(files))
		for _, fid := range files {
			a.rAll[fid] = true
		}
	}
	return a.rAll[id]
}

// parentChunks returns the chunk IDs of R's versions of the changed paths:
// a new version of a large file reuses most of them.
func (a *attempt) parentChunks() map[cas.ID]bool {
	out := map[cas.ID]bool{}
	for p := range a.changes {
		old, ok := a.rFiles[p]
		if !ok {
			continue
		}
		o, err := a.chain.Store().Get(old)
		if err != nil {
			continue // not known to be in R: written again
		}
		if f, err := cas.DecodeFile(o); err == nil {
			for _, c := range f.Chunks {
				out[c.ID] = true
			}
		}
	}
	return out
}

// writeFiles puts the changed files' objects R lacks into the pack.
func (a *attempt) writeFiles() error {
	ids := a.merged.IDs
	for p, id := range a.changes {
		if id.IsZero() {
			if _, ok := ids[p]; ok { // a zero ID in changes means "removed"
				return fmt.Errorf("%w: %q has the zero file ID", cas.ErrInvalidPath, p)
			}
			continue
		}
		if a.sink.Added(id) || a.inR(id) {
			continue // R (or this pack) holds it already
		}
		content, err := a.s.Content(a.merged, p)
		if err != nil {
			return err
		}
		if _, err := cas.WriteFile(a.sink, content); err != nil {
			return err
		}
	}
	a.changed = a.changes
	return nil
}

// writeCommit adds the head commit and finishes the pack.
func (a *attempt) writeCommit(tree cas.ID) (cas.ID, error) {
	commit := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: a.observed.Head(), Publication: a.publication, Time: time.Now(), Message: []byte(a.message)})
	if err := a.sink.Put(commit); err != nil {
		return cas.ID{}, err
	}
	if err := a.sink.PackTrees(a.chain.Store(), tree, a.parentTree()); err != nil {
		return cas.ID{}, err
	}
	var err error
	if a.pack, err = a.sink.Finish(); err != nil {
		return cas.ID{}, err
	}
	return commit.ID, nil
}

// parentTree is the root tree of the observed head (zero: none, or not
// in the cache: the trees then go whole).
func (a *attempt) parentTree() cas.ID {
	if a.observed.Head().IsZero() {
		return cas.ID{}
	}
	o, err := a.chain.Store().Get(a.observed.Head())
	if err != nil {
		return cas.ID{}
	}
	c, err := cas.DecodeCommit(o)
	if err != nil {
		return cas.ID{}
	}
	return c.Tree
}

// prepareBaseline starts writing, while the proposal is published, the
// baseline that accepting it would record when L itself is proposed: its
// generation follows the observed one, its tree is L's. Whatever an
// earlier attempt of the session prepared is discarded first.
func (a *attempt) prepareBaseline() {
	s := a.s
	s.prep.Discard()
	s.prep = nil
	if a.from == nil || a.from != s.Base || !s.Base.Exact() {
		return
	}
	s.prep = s.State.Prepare(&pstate.Baseline{Generation: a.observed.Generation() + 1, Head: a.head, Files: a.merged.IDs})
}

// waitRecorded returns once the attempt's pending record is written, with
// its outcome.
func (a *attempt) waitRecorded() error {
	if a.recorded == nil {
		return nil
	}
	<-a.recorded
	return a.recordErr
}

// record writes the pending-publication record. A P that cannot hold it
// could not record the baseline either: publishing then would leave the
// accepted change for the next merge to meet as a conflict, so nothing is
// published.
func (a *attempt) record() error {
	var err error
	if a.merged.Local && a.observed.Head() == a.s.Base.Head {
		// The proposal is L itself and changes is L's delta from A: no
		// need to compare 10,000 paths again.
		a.pend, err = a.s.recordPending(a.publication, nil, a.changes)
	} else {
		a.pend, err = a.s.recordPending(a.publication, a.merged.IDs, nil)
	}
	return err
}

// recordPending writes the record for a publication attempt whose
// proposed tree is ids, built from the scanned L against s.Base; or, when
// the proposal is L itself, whose delta from s.Base is local (zero ID:
// removed). It returns the new entry (kept for adoption in this session
// once accepted).
func (s *session) recordPending(publication string, ids, local map[string]cas.ID) (pstate.PendingEntry, error) {
	ent := pstate.PendingEntry{Publication: publication, Overlay: map[string]string{}, Base: s.Base.Head}
	if s.v4 != nil {
		ent.V4, ent.First, ent.Last = true, s.v4.first, s.v4.last
	}
	if ids == nil {
		for p, id := range local {
			if id.IsZero() {
				ent.Overlay[p] = ""
			} else {
				ent.Overlay[p] = hex.EncodeToString(id[:])
			}
		}
	} else {
		base := s.BaseFiles()
		for p, id := range s.Scan.Files {
			if base[p] == id {
				continue
			}
			m, inM := ids[p]
			if !inM {
				continue
			}
			if m != id {
				c, err := s.Content(&plan.Merged{IDs: s.Scan.Files}, p)
				if err != nil {
					continue // A stays the base of p: at worst a conflict
				}
				if ent.Bases == nil {
					ent.Bases = map[string][]byte{}
				}
				ent.Bases[p] = c
			}
			ent.Overlay[p] = hex.EncodeToString(id[:])
		}
		for p := range base {
			if _, inL := s.Scan.Files[p]; !inL {
				if _, inM := ids[p]; !inM {
					ent.Overlay[p] = ""
				}
			}
		}
	}
	if err := s.Pending.Record(s.Base, ent); err != nil {
		return pstate.PendingEntry{}, err
	}
	return ent, nil
}
