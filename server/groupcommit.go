package server

import (
	"context"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// Group commit, the server's half (remote/proposal.go has the protocol).
// When Config.GroupCommit is on, a commit attempt that found registered
// proposals of other writers on the generation it builds on includes each
// that merges cleanly onto its own result, in the order given:
//
//	for each candidate: open its pack -> its head commit (parent must be
//	the observed head) -> its tree -> its changes against the observed
//	tree -> per changed path: untouched by the group so far: taken as it
//	is; changed by the group too (the same path, a file on both sides):
//	three-way merged (merge.Text, rule 6 included) with the observed
//	version as base, the group's version as remote and the candidate's as
//	local, as the proposer's own retry after the group would merge it; a
//	conflict, a modify/delete, a case-folded twin or a file where the
//	group has a directory (or the reverse): the candidate is left out ->
//	re-parent: a pack with its file objects (merged ones written anew),
//	the rebuilt trees and a commit with the candidate's own publication
//	ID, time and message on the previous head.
//
// A candidate left out goes to its proposer, whose own retry merges it
// (and reports a conflict if there is one). Each member's increment is its
// proposer's change rebased onto the group's tree before it: for a path
// only it changed, exactly its own change; for a merged path, its hunks
// applied to the group's version. The proposer's diffstat (its own change
// against the tree it built on) stands as it computed it.

// groupPart is one member the attempt offered, with what it changed.
type groupPart struct {
	member  remote.Member
	changes map[string]cas.ID
	merged  bool // a path of it was three-way merged with the group's
}

// packSource reads objects from in-memory packs, then from a fallback.
type packSource struct {
	packs    []*cas.Pack
	fallback cas.Source
}

func (p *packSource) Get(id cas.ID) (cas.Object, error) {
	for _, pk := range p.packs {
		if o, err := pk.Get(id); err == nil {
			return o, nil
		}
	}
	return p.fallback.Get(id)
}

// include is the attempt's remote.IncludeFunc.
func (a *attempt) include(_ context.Context, observed remote.State, own remote.Proposal, cands []remote.Candidate) ([]remote.Member, error) {
	a.parts = nil
	if a.merged == nil || a.chain == nil {
		return nil, nil
	}
	ownPack, err := cas.OpenPack(own.Pack)
	if err != nil {
		return nil, err
	}
	var fallback cas.Source = a.s.src
	if a.chain != nil {
		fallback = a.chain.store
	}
	src := &packSource{packs: []*cas.Pack{ownPack}, fallback: fallback}
	oFiles := a.rFiles
	if observed.Head() == a.s.base.Head {
		oFiles = a.s.baseFiles() // rFiles holds only the changed paths then
	}
	g := &groupView{clash: newClashSet(), changed: map[string]cas.ID{}, base: a.merged.ids}
	for p := range a.changes {
		g.clash.add(p)
		g.changed[p] = a.changes[p]
	}
	prevHead := own.Head
	prevTree, err := commitTree(src, prevHead)
	if err != nil {
		return nil, err
	}
	var out []remote.Member
	for _, c := range cands {
		part, tree, ok := a.rebase(src, oFiles, g, c, prevHead, prevTree)
		if !ok {
			continue
		}
		pk, err := cas.OpenPack(part.member.Pack)
		if err != nil {
			continue
		}
		src.packs = append(src.packs, pk)
		for p, id := range part.changes {
			g.clash.add(p)
			g.changed[p] = id
		}
		a.parts = append(a.parts, part)
		out = append(out, part.member)
		prevHead, prevTree = part.member.Head, tree
	}
	return out, nil
}

// groupView is the group's tree so far, as far as a candidate needs it:
// the paths the group changed (the attempt's own and its members'), their
// versions there (zero ID: removed) and the attempt's result under them.
type groupView struct {
	clash   *clashSet
	changed map[string]cas.ID
	base    map[string]cas.ID // the attempt's own result
}

// at is the group's version of path p.
func (g *groupView) at(p string) (cas.ID, bool) {
	if id, ok := g.changed[p]; ok {
		return id, !id.IsZero()
	}
	id, ok := g.base[p]
	return id, ok
}

// rebase re-parents one candidate onto prev, or reports that it does not
// merge cleanly (or is malformed: a helper never fails for another
// writer's proposal).
func (a *attempt) rebase(src *packSource, oFiles map[string]cas.ID, g *groupView, c remote.Candidate, prevHead, prevTree cas.ID) (groupPart, cas.ID, bool) {
	pack, err := cas.OpenPack(c.PackData)
	if err != nil {
		return groupPart{}, cas.ID{}, false
	}
	o, err := pack.Get(c.Head)
	if err != nil {
		return groupPart{}, cas.ID{}, false
	}
	commit, err := cas.DecodeCommit(o)
	if err != nil || commit.Parent != a.observed.Head() || commit.Publication != c.Publication {
		return groupPart{}, cas.ID{}, false
	}
	theirs := &packSource{packs: []*cas.Pack{pack}, fallback: src}
	files, err := cas.ReadTree(theirs, commit.Tree)
	if err != nil {
		return groupPart{}, cas.ID{}, false
	}
	changes := changedPaths(oFiles, files)
	if len(changes) == 0 {
		return groupPart{}, cas.ID{}, false
	}
	sink := &filterSink{pack: cas.NewPackWriter(), added: map[cas.ID]bool{}, inParent: map[cas.ID]bool{}}
	merges := 0
	for p, id := range changes {
		if _, same := g.changed[p]; !same {
			if g.clash.meets(p) {
				return groupPart{}, cas.ID{}, false // a twin, or a file against a directory
			}
			// Every object of each new file version goes in, wherever it
			// is found: the member's pack must hold what its head needs
			// beyond the previous head whatever the closure of that head
			// turns out to hold.
			if !id.IsZero() {
				if err := copyFile(theirs, sink, id); err != nil {
					return groupPart{}, cas.ID{}, false
				}
			}
			continue
		}
		merged, ok := a.mergePath(theirs, oFiles, g, p, id)
		if !ok {
			return groupPart{}, cas.ID{}, false
		}
		gid, _ := g.at(p)
		if merged == gid {
			delete(changes, p) // the group made the same change
			continue
		}
		changes[p] = merged
		merges++
		if _, err := cas.WriteFile(sink, mustContent(a, theirs, merged)); err != nil {
			return groupPart{}, cas.ID{}, false
		}
		// The proposer's own version goes in too, though no tree names
		// it: a proposer whose rewrite after acceptance did not finish
		// adopts its publication with that version as its merge base
		// (DESIGN §6), and a cache that lost it must find it in a pack
		// of the history.
		if err := copyFile(theirs, sink, id); err != nil {
			return groupPart{}, cas.ID{}, false
		}
	}
	if len(changes) == 0 {
		return groupPart{}, cas.ID{}, false // nothing left: its proposer's retry skips
	}
	tree, err := cas.UpdateTree(src, sink, prevTree, changes)
	if err != nil {
		return groupPart{}, cas.ID{}, false
	}
	cobj := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: prevHead, Publication: commit.Publication, Time: commit.Time, Message: commit.Message})
	if err := sink.Put(cobj); err != nil {
		return groupPart{}, cas.ID{}, false
	}
	data, err := sink.pack.Finish()
	if err != nil {
		return groupPart{}, cas.ID{}, false
	}
	return groupPart{member: remote.Member{Publication: commit.Publication, Head: cobj.ID, Pack: data}, changes: changes, merged: merges > 0}, tree, true
}

// mergePath merges the candidate's version theirs of p, a path the group
// changed too, onto the group's version: the ID of the clean result, or
// false (a conflict, or one side removed what the other changed). The
// merged content is kept in a.groupContent for the pack and the rewrite.
func (a *attempt) mergePath(src cas.Source, oFiles map[string]cas.ID, g *groupView, p string, theirs cas.ID) (cas.ID, bool) {
	gid, inG := g.at(p)
	if theirs.IsZero() || !inG {
		return cas.ID{}, theirs.IsZero() && !inG // both removed it: the same change
	}
	if theirs == gid {
		return gid, true
	}
	load := func(id cas.ID) ([]byte, bool) {
		if c, ok := a.groupContent[id]; ok {
			return c, true
		}
		if c, err := cas.ReadFile(src, id); err == nil {
			return c, true
		}
		c, err := a.s.load(id)
		return c, err == nil
	}
	var base []byte
	if bid, inBase := oFiles[p]; inBase {
		var ok bool
		if base, ok = load(bid); !ok {
			return cas.ID{}, false
		}
	}
	local, ok1 := load(theirs)
	remote, ok2 := load(gid)
	if !ok1 || !ok2 {
		return cas.ID{}, false
	}
	// The proposer publishing after the group would merge its own tree
	// (local) with the group's (remote): remote's additions come first.
	res := merge.Text(base, local, remote)
	if len(res.Conflicts) > 0 {
		return cas.ID{}, false
	}
	id, err := cas.WriteFile(nil, res.Content)
	if err != nil {
		return cas.ID{}, false
	}
	if a.groupContent == nil {
		a.groupContent = map[cas.ID][]byte{}
	}
	a.groupContent[id] = res.Content
	return id, true
}

// mustContent is the content of a file mergePath produced (or, for a
// result equal to one side, that side's).
func mustContent(a *attempt, src cas.Source, id cas.ID) []byte {
	if c, ok := a.groupContent[id]; ok {
		return c
	}
	c, _ := cas.ReadFile(src, id)
	return c
}

// copyFile puts a file object and its chunks into sink.
func copyFile(src cas.Source, sink cas.Sink, id cas.ID) error {
	o, err := src.Get(id)
	if err != nil {
		return err
	}
	f, err := cas.DecodeFile(o)
	if err != nil {
		return err
	}
	for _, ch := range f.Chunks {
		co, err := src.Get(ch.ID)
		if err != nil {
			return err
		}
		if err := sink.Put(co); err != nil {
			return err
		}
	}
	return sink.Put(o)
}

func commitTree(src cas.Source, head cas.ID) (cas.ID, error) {
	o, err := src.Get(head)
	if err != nil {
		return cas.ID{}, err
	}
	c, err := cas.DecodeCommit(o)
	if err != nil {
		return cas.ID{}, err
	}
	return c.Tree, nil
}

// clashSet holds the paths a group changed, to refuse a candidate whose
// change meets one of them: the same path, a case-folded twin, a file
// where the group has a directory (or the reverse), or a directory name
// differing only by case.
type clashSet struct {
	files map[string]bool   // fold keys of changed paths
	dirs  map[string]string // fold key of a directory on a changed path -> its exact name
}

func newClashSet() *clashSet {
	return &clashSet{files: map[string]bool{}, dirs: map[string]string{}}
}

func foldPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = workdir.FoldKey(s)
	}
	return strings.Join(segs, "/")
}

func (c *clashSet) add(p string) {
	c.files[foldPath(p)] = true
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			c.dirs[foldPath(p[:i])] = p[:i]
		}
	}
}

func (c *clashSet) meets(p string) bool {
	f := foldPath(p)
	if c.files[f] {
		return true
	}
	if _, ok := c.dirs[f]; ok {
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		d := foldPath(p[:i])
		if c.files[d] {
			return true
		}
		if exact, ok := c.dirs[d]; ok && exact != p[:i] {
			return true
		}
	}
	return false
}

// groupFiles is the accepted tree of a write that included the first n
// offered members after the attempt's own result (with the content of
// the files include merged, which no cache holds yet).
func (a *attempt) groupFiles(n int) *merged {
	if n == 0 {
		return a.merged
	}
	m := &merged{ids: make(map[string]cas.ID, len(a.merged.ids)), contents: map[string][]byte{}}
	for p, id := range a.merged.ids {
		m.ids[p] = id
		if c, ok := a.merged.contents[p]; ok {
			m.contents[p] = c
		}
	}
	for _, part := range a.parts[:min(n, len(a.parts))] {
		for p, id := range part.changes {
			delete(m.contents, p)
			if id.IsZero() {
				delete(m.ids, p)
				continue
			}
			m.ids[p] = id
			if c, ok := a.groupContent[id]; ok {
				m.contents[p] = c
			}
		}
	}
	return m
}

// keepMemberPacks adds the packs of a group's own increment and accepted
// members to the cache (this process built them all), advancing its reach
// as keepOwnPack does. Their keys are derived, not looked up: in a large
// group the first increments are already folded out of the tail.
func (s *session) keepMemberPacks(acc remote.Accepted, last *attempt) {
	if acc.Members == 0 || acc.State.Manifest == nil {
		return
	}
	for _, part := range last.parts[:min(acc.Members, len(last.parts))] {
		if part.merged {
			s.e.groupMerged.Add(1)
		}
	}
	c, err := s.e.openChain(chainKey(acc.State))
	if err != nil {
		return
	}
	// One file for the whole group (a cas bundle) and one record of the
	// reach: a file per pack and per generation made a group of 20 cost
	// its holder 40 file creations, the dearest thing a commit does to
	// the local disk.
	gen := acc.State.Generation() - uint64(acc.Members)
	packs := []cas.NamedPack{{Name: packName(remote.PackRef{Key: remote.IncrementKey(gen, acc.Publication)}), Data: last.pack}}
	head := last.head
	for i, part := range last.parts[:min(acc.Members, len(last.parts))] {
		key := remote.IncrementKey(gen+1+uint64(i), part.member.Publication)
		packs = append(packs, cas.NamedPack{Name: packName(remote.PackRef{Key: key}), Data: part.member.Pack})
		head = part.member.Head
	}
	if err := c.store.AddPacks(packs); err != nil {
		s.e.log.Warn("cannot keep a group's packs in the cache", "err", err)
		return
	}
	if s.e.reachOf(c) == gen-1 {
		s.e.setReach(c, gen+uint64(len(packs)-1), head)
	}
}

// includedTarget is the tree L is rewritten to when another writer's
// group accepted this commit: the tree of the `current` that proved it.
// The proposal was registered on generation parent, which the cache
// reaches: the group pack brings it to the group's last generation in one
// read, instead of one per increment of the group.
func (s *session) includedTarget(state remote.State, parent uint64) (*merged, error) {
	s.e.primeFromGroup(s.ctx, state, parent)
	chain, err := s.e.sync(s.ctx, state)
	if err != nil {
		return nil, err
	}
	s.src = s.e.source(chain)
	files, err := treeOf(s.src, state.Head())
	if err != nil {
		return nil, err
	}
	return &merged{ids: files}, nil
}

// primeFromGroup adds the group pack of the write that accepted the
// proposals registered on generation parent to the cache of state's
// chain, when that cache reaches exactly parent, and advances the reach
// to the last generation the pack covers. Anything amiss only leaves the
// work to sync.
func (e *Engine) primeFromGroup(ctx context.Context, state remote.State, parent uint64) {
	c, err := e.openChainOf(state)
	if err != nil || e.reachOf(c) != parent {
		return
	}
	gp, err := e.notebook.FetchGroupPack(ctx, state, parent)
	if err != nil || gp.Last <= parent {
		return
	}
	if err := c.store.AddPack(packName(remote.PackRef{Key: gp.Key}), gp.Data); err != nil {
		return
	}
	e.setReach(c, gp.Last, gp.Head)
}

// afterGroupPublish is afterPublish for a write that accepted members
// generations after its own: the rollups of every block one of those
// generations ends are built too (readers would otherwise fetch the
// halves of each), lowest first, then the last generation's work.
func (e *Engine) afterGroupPublish(state remote.State, members int) {
	last := state.Generation()
	first := last - uint64(members)
	var ends []uint64
	for g := first; g < last; g++ {
		if len(remote.RollupsEndingAt(g)) > 0 {
			ends = append(ends, g)
		}
	}
	if len(ends) == 0 {
		e.afterPublish(state)
		return
	}
	e.background.Go(func() {
		for _, g := range ends {
			e.buildRollupsAt(state, g)
		}
		e.afterPublish(state)
	})
}
