package server

import (
	"context"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Group commit, the server's half (remote/proposal.go has the protocol).
// When Config.GroupCommit is on, a commit attempt that found registered
// proposals of other writers on the generation it builds on includes each
// that merges cleanly onto its own result, in the order given:
//
//	for each candidate: open its pack -> its head commit (parent must be
//	the observed head) -> its tree -> its changes against the observed
//	tree -> clean when no changed path (or a directory on it) meets one
//	already changed in this group, case folding included -> re-parent:
//	a pack with its file objects, the rebuilt trees and a commit with the
//	candidate's own publication ID, time and message on the previous head.
//
// "Merges cleanly" is deliberately narrower than the three-way merge:
// disjoint paths only. A candidate touching a path the group touched is
// left to its proposer, whose own retry merges it (and reports a conflict
// if there is one). Each member's increment is then exactly its proposer's
// own change, so the proposer's diffstat stands as it computed it.

// groupPart is one member the attempt offered, with what it changed.
type groupPart struct {
	member  remote.Member
	changes map[string]cas.ID
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
	clash := newClashSet()
	for p := range a.changes {
		clash.add(p)
	}
	prevHead := own.Head
	prevTree, err := commitTree(src, prevHead)
	if err != nil {
		return nil, err
	}
	var out []remote.Member
	for _, c := range cands {
		part, tree, ok := a.rebase(src, oFiles, clash, c, prevHead, prevTree)
		if !ok {
			continue
		}
		pk, err := cas.OpenPack(part.member.Pack)
		if err != nil {
			continue
		}
		src.packs = append(src.packs, pk)
		for p := range part.changes {
			clash.add(p)
		}
		a.parts = append(a.parts, part)
		out = append(out, part.member)
		prevHead, prevTree = part.member.Head, tree
	}
	return out, nil
}

// rebase re-parents one candidate onto prev, or reports that it does not
// merge cleanly (or is malformed: a helper never fails for another
// writer's proposal).
func (a *attempt) rebase(src *packSource, oFiles map[string]cas.ID, clash *clashSet, c remote.Candidate, prevHead, prevTree cas.ID) (groupPart, cas.ID, bool) {
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
	for p := range changes {
		if clash.meets(p) {
			return groupPart{}, cas.ID{}, false
		}
	}
	sink := &filterSink{pack: cas.NewPackWriter(), added: map[cas.ID]bool{}, inParent: map[cas.ID]bool{}}
	// Every object of each new file version goes in, wherever it is
	// found: the member's pack must hold what its head needs beyond the
	// previous head whatever the closure of that head turns out to hold.
	for _, id := range changes {
		if id.IsZero() {
			continue
		}
		if err := copyFile(theirs, sink, id); err != nil {
			return groupPart{}, cas.ID{}, false
		}
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
	return groupPart{member: remote.Member{Publication: commit.Publication, Head: cobj.ID, Pack: data}, changes: changes}, tree, true
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
		segs[i] = foldKey(s)
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
// offered members after the attempt's own result.
func (a *attempt) groupFiles(n int) map[string]cas.ID {
	if n == 0 {
		return a.merged.ids
	}
	files := make(map[string]cas.ID, len(a.merged.ids))
	for p, id := range a.merged.ids {
		files[p] = id
	}
	for _, part := range a.parts[:min(n, len(a.parts))] {
		for p, id := range part.changes {
			if id.IsZero() {
				delete(files, p)
			} else {
				files[p] = id
			}
		}
	}
	return files
}

// keepMemberPacks adds the packs of a group's own increment and accepted
// members to the cache (this process built them all), advancing its reach
// as keepOwnPack does. Their keys are derived, not looked up: in a large
// group the first increments are already folded out of the tail.
func (s *session) keepMemberPacks(acc remote.Accepted, last *attempt) {
	if acc.Members == 0 || acc.State.Manifest == nil {
		return
	}
	c, err := s.e.openChain(chainKey(acc.State))
	if err != nil {
		return
	}
	gen := acc.State.Generation() - uint64(acc.Members)
	packs := [][]byte{last.pack}
	pubs := []string{acc.Publication}
	heads := []cas.ID{last.head}
	for _, part := range last.parts[:min(acc.Members, len(last.parts))] {
		packs = append(packs, part.member.Pack)
		pubs = append(pubs, part.member.Publication)
		heads = append(heads, part.member.Head)
	}
	for i := range packs {
		g := gen + uint64(i)
		if err := c.store.AddPack(packName(remote.PackRef{Key: remote.IncrementKey(g, pubs[i])}), packs[i]); err != nil {
			s.e.log.Warn("cannot keep a group's pack in the cache", "err", err)
			return
		}
		if s.e.reachOf(c) == g-1 {
			s.e.setReach(c, g, heads[i])
		}
	}
}

// includedTarget is the tree L is rewritten to when another writer's
// group accepted this commit: the tree of the `current` that proved it.
func (s *session) includedTarget(state remote.State) (*merged, error) {
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
