package publish

import (
	"context"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A re-parented proposal whose trees are deltas of its parent's (as the
// engine packs them) reads from the group pack beside the closure of
// the generation before it: the fold puts the bases the state it folded
// onto no longer reaches in the group pack, and the group pack reads by
// itself (docs/storage.md §3C.6). Without them, a reader whose chain
// starts at a checkpoint after the proposal's parent could not apply it.
func TestGroupPackHoldsTheBasesOfAReparentedProposal(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	e.commit(map[string]*string{"dir/a.md": str("a\n"), "top.md": str("top\n")}) // 1
	folder := e.id()                                                             // first in the fold order
	// A proposal on 1 whose changed trees (the root, dir) are deltas of
	// generation 1's.
	st := State{Manifest: e.current()}
	src, err := allPacks(e.mem)(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	parentTree, _, err := commitFiles(src, st.Head())
	if err != nil {
		t.Fatal(err)
	}
	sink := cas.NewObjectSet()
	fid, err := cas.WriteFile(sink, []byte("b\n"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := cas.UpdateTree(multi{sink, src}, sink, parentTree, map[string]cas.ID{"dir/b.md": fid})
	if err != nil {
		t.Fatal(err)
	}
	id := e.id()
	c := cas.EncodeCommit(cas.Commit{Tree: root, Parent: st.Head(), Publication: id, Message: []byte(id)})
	if err := sink.Put(c); err != nil {
		t.Fatal(err)
	}
	pw := cas.NewPackWriter()
	for _, oid := range sink.IDs() {
		o, _ := sink.Get(oid)
		if o.Kind != cas.KindTree {
			if err := pw.Put(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	dirOf := func(tree cas.ID) cas.ID {
		o, _ := multi{sink, src}.Get(tree)
		entries, _ := cas.DecodeTree(o)
		for _, en := range entries {
			if en.Name == "dir" {
				return en.ID
			}
		}
		t.Fatal("no dir")
		return cas.ID{}
	}
	for _, pair := range [][2]cas.ID{{root, parentTree}, {dirOf(root), dirOf(parentTree)}} {
		o, _ := sink.Get(pair[0])
		base, _ := src.Get(pair[1])
		if err := pw.PutDelta(o, base, 0); err != nil {
			t.Fatal(err)
		}
	}
	pack, err := pw.Finish()
	if err != nil {
		t.Fatal(err)
	}
	data, err := remote.EncodeProposalV4(remote.ProposalV4{Publication: id, Parent: 1, ParentHead: st.Head(), Head: c.ID, Time: 1}, pack)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.mem.Put(ctx, remote.ProposalKey(1, id), data); err != nil {
		t.Fatal(err)
	}
	p, err := cas.OpenPack(pack)
	if err != nil || len(p.Bases()) != 2 {
		t.Fatalf("the proposal's pack: %d bases, %v", len(p.Bases()), err)
	}

	// The folder changes dir/ too: generation 1's trees leave the closure
	// of generation 2, onto which the proposal is re-parented.
	e.commitAs(folder, map[string]*string{"dir/c.md": str("c\n")})
	m := e.current()
	inc, ok := m.Increment(m.AcceptedAt(id))
	if !ok || inc.Generation != 3 || inc.Group == (remote.GroupRef{}) {
		t.Fatalf("the proposal: %+v", inc)
	}
	gdata, _, err := e.mem.Get(ctx, inc.Group.Key())
	if err != nil {
		t.Fatal(err)
	}
	group, err := cas.OpenPack(gdata)
	if err != nil {
		t.Fatal(err)
	}
	if b := group.Bases(); len(b) != 0 {
		t.Fatalf("the group pack needs %d bases from elsewhere", len(b))
	}
	if err := group.Verify(); err != nil {
		t.Fatalf("the group pack by itself: %v", err)
	}
	// The proposal reads with the group pack as its bases, and its files
	// are generation 3's.
	if err := p.WithBases(group).Verify(); err != nil {
		t.Fatalf("the proposal with the group pack: %v", err)
	}
	if got := e.files(inc.Head); got["dir/b.md"] != "b\n" || got["dir/c.md"] != "c\n" || got["dir/a.md"] != "a\n" {
		t.Fatalf("generation 3: %v", got)
	}
}
