package publish

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/casefold"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
)

// proposal is one listed version whose object the folder read.
type proposal struct {
	desc remote.ProposalV4
	pack *cas.Pack
	// foreign: not a version-4 proposal (a version-3 registration) or
	// not what its key says: declined, never folded.
	foreign bool
}

// folded is a fold's outcome: the members it accepts in order, the
// versions it declines (the folder's own among them if it does not
// merge), and the group pack of what re-parenting created (nil when the
// group is one proposal built on the state it was folded onto: its
// proposal is its pack).
type folded struct {
	members  []remote.MemberV4
	declined []remote.Declined
	group    []byte
}

// multiSource reads objects from the proposals' packs, the objects the
// fold created, then the engine's source.
type multiSource struct {
	packs []*cas.Pack
	made  *cas.ObjectSet
	rest  cas.Source
}

func (s *multiSource) Get(id cas.ID) (cas.Object, error) {
	if o, err := s.made.Get(id); err == nil {
		return o, nil
	}
	for _, p := range s.packs {
		if o, err := p.Get(id); err == nil {
			return o, nil
		}
	}
	if s.rest == nil {
		return cas.Object{}, fmt.Errorf("publish: object %s: %w", id, cas.ErrNotFound)
	}
	return s.rest.Get(id)
}

// folding is a fold in progress on one state: the versions folded so
// far, in fold order, and what re-parenting them made. A fold is a left
// fold (each version merged onto the fold so far, reading only its own
// pack, the objects made before it and the state's), so a folding
// extended by add with the versions that follow in fold order is the
// fold of all of them at once, wherever the pieces split
// (TestFoldInPiecesIsTheFoldAtOnce). A folder extends one while it
// gathers, so that after its last LIST only what that LIST added is
// left to fold.
type folding struct {
	c   State
	own string
	src *multiSource
	// The fold's head, and its tree and files, read only when a
	// proposal is re-parented onto it (prevFiles nil until then): a
	// writer alone, whose one proposal is built on the state, reads no
	// tree.
	prevHead, prevTree cas.ID
	prevFiles          map[string]cas.ID
	made               []cas.Object      // in the order created, for a deterministic pack
	against            map[cas.ID]cas.ID // a base put in the pack -> the fold's tree at its path
	out                folded
}

func newFolding(c State, own string, objects cas.Source) *folding {
	f := &folding{c: c, own: own, src: &multiSource{made: cas.NewObjectSet(), rest: objects},
		prevHead: c.Head(), against: map[cas.ID]cas.ID{}}
	if f.prevHead.IsZero() {
		f.prevFiles = map[string]cas.ID{}
	}
	return f
}

func (f *folding) readPrev() error {
	if f.prevFiles != nil {
		return nil
	}
	var err error
	if f.prevTree, f.prevFiles, err = commitFiles(f.src, f.prevHead); err != nil {
		if f.prevHead == f.c.Head() {
			return fmt.Errorf("publish: the tree of generation %d: %w", f.c.Generation(), err)
		}
		return fmt.Errorf("publish: the tree of version %s: %w", f.prevHead, err)
	}
	return nil
}

func (f *folding) Put(o cas.Object) error {
	if _, err := f.src.made.Get(o.ID); err != nil {
		f.made = append(f.made, o)
	}
	return f.src.made.Put(o)
}

// add folds props, which follow in fold order every version folded
// before, onto the state (whose head's closure objects reaches): each
// proposal that merges cleanly onto the fold so far is re-parented onto
// the previous head (a path only it changed taken as it is, a path the
// fold changed too merged three-way with merge.Text); a text conflict, a
// modify/delete, a case-folded twin or a file against a directory
// declines it, whole, the folder's own version like any other.
// Deterministic: the same state and props give the same members, heads
// and group pack. An error is the engine's or the objects' (a version
// that cannot be read is declined, not an error); the folding is then
// not to be extended.
func (f *folding) add(props []proposal) error {
	out, src := &f.out, f.src
	for _, p := range props {
		if p.pack != nil {
			// A proposal may store trees as deltas of its parent's
			// (pack version 2), which the state's objects hold.
			src.packs = append(src.packs, p.pack.WithBases(src.rest))
		}
		d := p.desc
		decline := func() {
			out.declined = append(out.declined, remote.Declined{Proposal: d.Parent, Publication: d.Publication})
		}
		if p.foreign {
			decline()
			continue
		}
		commit, err := headCommit(p.pack, d)
		if err != nil {
			decline()
			continue
		}
		if len(out.members) == 0 && d.Parent == f.c.Generation() && d.ParentHead == f.prevHead {
			// Built on the state folded onto: taken as it is. Another
			// writer's version is declined if its tree cannot be read;
			// the folder's own was built from objects it holds, so its
			// tree is read only if a later proposal needs it.
			var tree cas.ID
			var files map[string]cas.ID
			if d.Publication != f.own {
				if tree, files, err = commitFiles(src, d.Head); err != nil {
					decline()
					continue
				}
			}
			out.members = append(out.members, member(d))
			f.prevHead, f.prevTree, f.prevFiles = d.Head, tree, files
			continue
		}
		if err := f.readPrev(); err != nil {
			return err
		}
		bases, err := baseObjects(src, p.pack)
		if err != nil {
			decline() // its trees cannot be read: rebase could not either
			continue
		}
		changes, ok := rebase(src, f, d, commit, f.prevFiles)
		if !ok {
			decline()
			continue
		}
		tree, err := cas.UpdateTree(src, f, f.prevTree, changes)
		if err != nil {
			decline()
			continue
		}
		cobj := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: f.prevHead, Publication: commit.Publication, Time: commit.Time, Message: commit.Message})
		if err := f.Put(cobj); err != nil {
			return err
		}
		// The proposal's trees are deltas of the trees of the generation
		// it was built on, which the state it is re-parented onto need
		// not reach (nor a chain that starts at a later checkpoint): its
		// bases go in the group pack, so a reader decodes the proposal
		// from its parent's closure and the group pack alone.
		set := map[cas.ID]bool{}
		for _, o := range bases {
			set[o.ID] = true
			if err := f.Put(o); err != nil {
				return err
			}
		}
		if len(set) > 0 {
			if pc, err := cas.DecodeCommit(objectOrZero(src, d.ParentHead)); err == nil {
				pairTrees(src, set, pc.Tree, tree, f.against)
			}
		}
		m := member(d)
		m.Head = cobj.ID
		out.members = append(out.members, m)
		for path, id := range changes {
			if id.IsZero() {
				delete(f.prevFiles, path)
			} else {
				f.prevFiles[path] = id
			}
		}
		f.prevHead, f.prevTree = cobj.ID, tree
	}
	return nil
}

// result is the fold so far: its members, declines and group pack. The
// folding may be extended after it (appending past what it returned).
func (f *folding) result() (folded, error) {
	out := f.out
	if len(f.made) == 0 {
		return out, nil
	}
	w := cas.NewPackWriter()
	for _, o := range f.made {
		// A base goes as its delta from the fold's tree at its path
		// when that tree is in the pack (stored before it): its
		// difference only, and every reader of the pack can apply it.
		var err error
		if a, ok := f.against[o.ID]; ok && w.Has(a) {
			ao, _ := f.src.made.Get(a)
			err = w.PutDelta(o, ao, 0)
		} else {
			err = w.Put(o)
		}
		if err != nil {
			return folded{}, err
		}
	}
	data, err := w.Finish()
	if err != nil {
		return folded{}, err
	}
	out.group = data
	return out, nil
}

// baseObjects returns the objects pack's deltas are based on, whole.
func baseObjects(src cas.Source, pack *cas.Pack) ([]cas.Object, error) {
	var out []cas.Object
	for _, b := range pack.Bases() {
		o, err := src.Get(b)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// objectOrZero is src.Get with the error dropped (a zero object, which does
// not decode).
func objectOrZero(src cas.Source, id cas.ID) cas.Object {
	o, _ := src.Get(id)
	return o
}

// pairTrees maps each of bases (the trees of the generation a proposal
// was built on, along its changed paths) to the fold's tree at the same
// path, walking both from the roots g and f; the first mapping stays.
func pairTrees(src cas.Source, bases map[cas.ID]bool, g, f cas.ID, out map[cas.ID]cas.ID) {
	if !bases[g] || f.IsZero() || g == f {
		return
	}
	if _, ok := out[g]; !ok {
		out[g] = f
	}
	gt, err1 := cas.DecodeTree(objectOrZero(src, g))
	ft, err2 := cas.DecodeTree(objectOrZero(src, f))
	if err1 != nil || err2 != nil {
		return
	}
	dirs := map[string]cas.ID{}
	for _, e := range ft {
		if e.Kind == cas.KindTree {
			dirs[e.Name] = e.ID
		}
	}
	for _, e := range gt {
		if e.Kind == cas.KindTree {
			pairTrees(src, bases, e.ID, dirs[e.Name], out)
		}
	}
}

func member(d remote.ProposalV4) remote.MemberV4 {
	return remote.MemberV4{Publication: d.Publication, Proposal: d.Parent, Head: d.Head, Time: d.Time, Author: d.Author}
}

// headCommit decodes a proposal's head commit from its own pack and
// checks it is what the descriptor says: its parent is the descriptor's
// parent head, its publication the descriptor's.
func headCommit(pack *cas.Pack, d remote.ProposalV4) (cas.Commit, error) {
	if pack == nil {
		return cas.Commit{}, errors.New("no pack")
	}
	c, err := cas.ReadCommit(pack, d.Head)
	if err != nil {
		return cas.Commit{}, err
	}
	if c.Parent != d.ParentHead || c.Publication != d.Publication {
		return cas.Commit{}, errors.New("the head commit is not the descriptor's")
	}
	return c, nil
}

func commitFiles(src cas.Source, head cas.ID) (cas.ID, map[string]cas.ID, error) {
	c, err := cas.ReadCommit(src, head)
	if err != nil {
		return cas.ID{}, nil, err
	}
	files, err := cas.ReadTree(src, c.Tree)
	return c.Tree, files, err
}

// rebase returns the changes that put proposal d's change onto the fold
// so far (prev), or false when it does not merge cleanly. Its change is
// its tree against its parent's; for each changed path the fold left as
// the parent had it, its version is taken; for a path the fold changed
// too, the three versions are merged.
func rebase(src *multiSource, sink cas.Sink, d remote.ProposalV4, commit cas.Commit, prev map[string]cas.ID) (map[string]cas.ID, bool) {
	base := map[string]cas.ID{}
	if !d.ParentHead.IsZero() {
		var err error
		if _, base, err = commitFiles(src, d.ParentHead); err != nil {
			return nil, false
		}
	}
	theirs, err := cas.ReadTree(src, commit.Tree)
	if err != nil {
		return nil, false
	}
	changed := diff(base, theirs)
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range changed {
			if !yield(p) {
				return
			}
		}
	})
	out := map[string]cas.ID{}
	var clash *clashIndex // built on the first new path
	for _, p := range paths {
		t := changed[p]
		f, inF := prev[p]
		b, inB := base[p]
		if f == b && inF == inB {
			// The fold left p as the parent had it: take the change.
			if !t.IsZero() && !inF {
				if clash == nil {
					clash = newClashIndex(prev, changed)
				}
				if clash.meets(p) {
					return nil, false // a case-folded twin, or a file against a directory
				}
			}
			out[p] = t
			continue
		}
		switch {
		case t == f && (inF || t.IsZero()):
			continue // the fold made the same change
		case t.IsZero() || !inF:
			return nil, false // one side removed what the other changed
		}
		res, ok := mergeFile(src, sink, b, inB, f, t)
		if !ok {
			return nil, false
		}
		if res != f {
			out[p] = res
		}
	}
	return out, true
}

// mergeFile merges the proposal's version t of a file with the fold's f
// on the base b (absent: both added it). The proposer publishing after
// the fold would merge its own tree (local) with the fold's (remote).
func mergeFile(src cas.Source, sink cas.Sink, b cas.ID, inB bool, f, t cas.ID) (cas.ID, bool) {
	var base []byte
	if inB {
		var err error
		if base, err = cas.ReadFile(src, b); err != nil {
			return cas.ID{}, false
		}
	}
	local, err1 := cas.ReadFile(src, t)
	remote, err2 := cas.ReadFile(src, f)
	if err1 != nil || err2 != nil {
		return cas.ID{}, false
	}
	res := merge.Text(base, local, remote)
	if len(res.Conflicts) > 0 {
		return cas.ID{}, false
	}
	id, err := cas.WriteFile(sink, res.Content)
	return id, err == nil
}

// diff is the change from a to b: new or changed paths to their IDs,
// removed ones to the zero ID.
func diff(a, b map[string]cas.ID) map[string]cas.ID {
	out := map[string]cas.ID{}
	for p, id := range b {
		if a[p] != id {
			out[p] = id
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			out[p] = cas.ID{}
		}
	}
	return out
}

// clashIndex holds the fold's paths by fold key, to refuse a new path
// that would make a case-folded twin of one, a file where there is a
// directory or the reverse, or a directory name differing only by case.
// The paths the proposal itself removes do not count.
type clashIndex struct {
	files map[string]string // fold key of a path -> the path
	dirs  map[string]string // fold key of a directory -> the directory
}

func newClashIndex(files, changed map[string]cas.ID) *clashIndex {
	c := &clashIndex{files: map[string]string{}, dirs: map[string]string{}}
	for q := range files {
		if id, ok := changed[q]; ok && id.IsZero() {
			continue
		}
		c.files[foldPath(q)] = q
		for k := 0; k < len(q); k++ {
			if q[k] == '/' {
				c.dirs[foldPath(q[:k])] = q[:k]
			}
		}
	}
	return c
}

// meets reports whether adding the file p (not among the fold's files)
// would clash.
func (c *clashIndex) meets(p string) bool {
	key := foldPath(p)
	if _, ok := c.files[key]; ok {
		return true // a twin: p itself is not a file of the fold
	}
	if _, ok := c.dirs[key]; ok {
		return true // a file where the fold has a directory
	}
	for k := 0; k < len(p); k++ {
		if p[k] != '/' {
			continue
		}
		d := foldPath(p[:k])
		if _, ok := c.files[d]; ok {
			return true // a directory where the fold has a file
		}
		if exact, ok := c.dirs[d]; ok && exact != p[:k] {
			return true // a directory differing only by case
		}
	}
	return false
}

func foldPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = casefold.Key(s)
	}
	return strings.Join(segs, "/")
}
