package build

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// ErrConflict aborts a publication attempt whose merge conflicts.
var ErrConflict = errors.New("server: the merge has conflicts")

// Outcome is what the accepted (last) attempt decided: the part of an
// attempt that outlives the publication (diffstat, rewrite, conflicts).
type Outcome struct {
	Observed remote.State
	RFiles   map[string]cas.ID // the observed remote tree (the diffstat parent)
	Merged   *plan.Merged
	Pack     []byte
	Changed  map[string]cas.ID // paths of Merged that differ from RFiles (zero ID: removed)
}

// V4 is what the pending entry says of the version-4 call the attempt
// is a version of: the generations its first and its newest version
// were built on.
type V4 struct {
	First, Last uint64
}

// Attempt is one version of a commit's change: built against one
// observed `current`, it merges, writes the pack and records the pending
// publication.
//
//	Run: observe -> merge (skip if nothing changed) -> syncChain ->
//	     writeFiles -> writeTree -> writeCommit -> Head, Pack
//	     record, meanwhile: from the merge on when the change is L's
//	     delta from A, else once the commit is written
type Attempt struct {
	Outcome
	Publication string
	Changes     map[string]cas.ID   // the paths that differ from R (zero ID: removed)
	Pend        pstate.PendingEntry // the recorded entry (once WaitRecorded returned nil)
	Head        cas.ID              // the proposal's head commit
	// From is the baseline Changes is the delta from, when the merge was
	// L itself (nil otherwise): the accepted tree is From + Changes.
	From *dirstate.Baseline

	c       *dircall.Call
	ctx     context.Context
	message string
	v4      V4

	chain *objcache.Chain
	sink  *objcache.Sink
	rAll  map[cas.ID]bool // every file ID of R, built on first need
	// recorded is closed once the pending record is written (recordErr
	// its outcome); nil when it was written before Run returned.
	recorded  chan struct{}
	recordErr error
}

// New returns the attempt of call c's publication on observed, the state
// publish read (ctx: publish's, for the reads of the build).
func New(c *dircall.Call, ctx context.Context, observed remote.State, publication, message string, v4 V4) *Attempt {
	return &Attempt{Outcome: Outcome{Observed: observed}, c: c, ctx: ctx, Publication: publication, message: message, v4: v4}
}

// Run builds the attempt's change (a.Head, a.Pack); skip when the merge
// is the observed state itself (nothing to publish). The pending record
// is written meanwhile: WaitRecorded returns once it is. When Run
// succeeds, the caller prepares at once the baseline accepting it would
// record (From, Head, Merged).
func (a *Attempt) Run() (skip bool, err error) {
	if err := a.c.Env.Ident.NameStore(a.ctx); err != nil {
		// The first publication to a store names it (server/storeview).
		return false, err
	}
	if a.c.RecordOfAnotherStore() {
		return false, dircall.OutlivedRecord()
	}
	if a.c.Base != nil && a.Observed.Generation() < a.c.Base.Generation {
		// A state read from the store older than the baseline would
		// merge as if the remote had undone what the baseline holds:
		// the record is newer than the store (dircall.ErrRecordNewer).
		// The generation memory says first whether the store itself
		// went back (a restored `current`): then it is
		// GENERATION_REGRESSED, as on any read. (Only here: a state
		// publish read earlier may be older than what another engine of
		// this host has seen since, without the store going back.)
		if err := a.c.Env.Ident.Observe(a.ctx, a.Observed); err != nil {
			return false, err
		}
		return false, fmt.Errorf("%w: generation %d is older than the baseline's %d", dircall.ErrRecordNewer, a.Observed.Generation(), a.c.Base.Generation)
	}
	a.c.Base = a.c.Pending.Adopt(a.c.Ctx, a.c.Env.Notebook, a.c.Base, a.Observed)
	if skip, err = a.merge(); err != nil || skip {
		return skip, err
	}
	if a.localDelta() {
		// The record needs only the delta from A, known now: it is
		// written while the pack is built.
		a.startRecord()
	}
	if err := a.syncChain(); err != nil {
		return false, err
	}
	a.sink = objcache.NewSink(a.parentChunks(), true) // trees as deltas: only version-4 readers read a proposal's pack
	if err := a.writeFiles(); err != nil {
		return false, err
	}
	tree, err := a.writeTree(a.sink, a.chain.Store(), a.Observed.Head(), a.Merged.IDs, a.Changes)
	if err != nil {
		return false, err
	}
	if a.Head, err = a.writeCommit(tree); err != nil {
		return false, err
	}
	// The record must be in P before the proposal is registered (any
	// writer's fold may accept it from then on), not before the pack is
	// built: it is written meanwhile.
	if a.recorded == nil {
		a.startRecord()
	}
	return false, nil
}

// startRecord writes the pending record on a goroutine of its own
// (WaitRecorded waits for it).
func (a *Attempt) startRecord() {
	a.recorded = make(chan struct{})
	go func() {
		defer close(a.recorded)
		a.recordErr = a.record()
	}()
}

// localDelta reports whether the attempt proposes L itself on A's head,
// so that its record is L's delta from A (Changes) alone.
func (a *Attempt) localDelta() bool {
	return a.Merged.Local && a.Observed.Head() == a.c.Base.Head
}

// merge decides the attempt's tree and its changes from R; skip when the
// result is R itself.
func (a *Attempt) merge() (skip bool, err error) {
	s, observed := a.c, a.Observed
	if observed.Head() == s.Base.Head && s.Base.Exact() {
		// R == A: the merge is L, and L's delta from A is found in one
		// pass over A's encoded entries (no map of A is built unless L
		// added paths). rFiles then holds only A's entries at the changed
		// paths: all the diffstat reads of the parent.
		a.Merged = &plan.Merged{IDs: s.Scan.Files, Local: true}
		a.Changes, a.RFiles = s.BaseDelta(true)
		a.From = s.Base
		return len(a.Changes) == 0, nil
	}
	if err := a.syncChain(); err != nil {
		return false, err
	}
	if a.RFiles, err = objcache.TreeOf(s.Src, observed.Head()); err != nil {
		return false, err
	}
	if a.Merged, err = s.MergeWith(observed.Head(), a.RFiles); err != nil {
		return false, err
	}
	if len(a.Merged.Conflicts) > 0 {
		return false, ErrConflict
	}
	a.Changes = changedPaths(a.RFiles, a.Merged.IDs)
	return len(a.Changes) == 0, nil
}

// syncChain makes the cache hold the observed head's closure (once).
func (a *Attempt) syncChain() error {
	if a.chain != nil {
		return nil
	}
	chain, err := a.c.Env.Sync(a.ctx, a.Observed)
	if err != nil {
		return err
	}
	a.chain = chain
	a.c.Src = a.c.Env.Caches.Source(chain)
	return nil
}

// inR reports whether file ID id is certainly in R's closure: a file of R
// (any path). The set is built only when the cache holds id at all.
func (a *Attempt) inR(id cas.ID) bool {
	if !a.chain.Store().Has(id) {
		return false
	}
	if a.rAll == nil {
		files := a.RFiles
		if a.Merged.Local && a.Observed.Head() == a.c.Base.Head {
			files = a.c.BaseFiles() // RFiles holds only the changed paths
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
func (a *Attempt) parentChunks() map[cas.ID]bool {
	out := map[cas.ID]bool{}
	for p := range a.Changes {
		old, ok := a.RFiles[p]
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
func (a *Attempt) writeFiles() error {
	ids := a.Merged.IDs
	for p, id := range a.Changes {
		if id.IsZero() {
			if _, ok := ids[p]; ok { // a zero ID in changes means "removed"
				return fmt.Errorf("%w: %q has the zero file ID", cas.ErrInvalidPath, p)
			}
			continue
		}
		if a.sink.Added(id) || a.inR(id) {
			continue // R (or this pack) holds it already
		}
		content, err := a.c.Content(a.Merged, p)
		if err != nil {
			return err
		}
		if chunks := a.scannedChunks(p, id); chunks != nil {
			// L's file as the scan read it: its chunks are known.
			if _, err := cas.WriteFileChunks(a.sink, content, chunks); err != nil {
				return err
			}
			continue
		}
		if _, err := cas.WriteFile(a.sink, content); err != nil {
			return err
		}
	}
	a.Changed = a.Changes
	return nil
}

// scannedChunks returns the chunk list the scan found for p when p's
// file in the merge is the one the scan read (the same file ID: the same
// content, and a file object that names these chunks); nil otherwise.
func (a *Attempt) scannedChunks(p string, id cas.ID) []cas.ChunkRef {
	sc := a.c.Scan
	if sc == nil || sc.Files[p] != id {
		return nil
	}
	return sc.Chunks[p]
}

// writeCommit adds the head commit and finishes the pack.
func (a *Attempt) writeCommit(tree cas.ID) (cas.ID, error) {
	commit := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: a.Observed.Head(), Publication: a.Publication, Time: time.Now(), Message: []byte(a.message)})
	if err := a.sink.Put(commit); err != nil {
		return cas.ID{}, err
	}
	if err := a.sink.PackTrees(a.chain.Store(), tree, a.parentTree()); err != nil {
		return cas.ID{}, err
	}
	var err error
	if a.Pack, err = a.sink.Finish(); err != nil {
		return cas.ID{}, err
	}
	return commit.ID, nil
}

// parentTree is the root tree of the observed head (zero: none, or not
// in the cache: the trees then go whole).
func (a *Attempt) parentTree() cas.ID {
	if a.Observed.Head().IsZero() {
		return cas.ID{}
	}
	c, err := cas.ReadCommit(a.chain.Store(), a.Observed.Head())
	if err != nil {
		return cas.ID{}
	}
	return c.Tree
}

// WaitRecorded returns once the attempt's pending record is written, with
// its outcome.
func (a *Attempt) WaitRecorded() error {
	if a.recorded == nil {
		return nil
	}
	<-a.recorded
	return a.recordErr
}
