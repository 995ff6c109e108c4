package publish

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// treeCounter is a Source that counts the trees read through it.
type treeCounter struct {
	cas.Source
	trees int
}

func (c *treeCounter) Get(id cas.ID) (cas.Object, error) {
	o, err := c.Source.Get(id)
	if err == nil && o.Kind == cas.KindTree {
		c.trees++
	}
	return o, err
}

// A writer alone, whose one version is built on the state it folds onto,
// takes it as it is: its fold reads no tree (neither the state's nor its
// own), which is most of what a fold cost a one-line commit. Another
// writer's version in the same place is still read, and declined when its
// tree cannot be.
func TestFoldOfAVersionBuiltOnTheStateReadsNoTree(t *testing.T) {
	store := cas.NewObjectSet()
	file, err := cas.WriteFile(store, []byte("a\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree0, err := cas.UpdateTree(store, store, cas.ID{}, map[string]cas.ID{"a.md": file})
	if err != nil {
		t.Fatal(err)
	}
	head0 := cas.EncodeCommit(cas.Commit{Tree: tree0, Publication: "p0", Message: []byte("p0")})
	mustPutObj(t, store, head0)
	state := State{Manifest: &remote.ManifestV4{Generation: 1, Head: head0.ID}}

	version := func(id string, withTree bool) proposal {
		w := cas.NewPackWriter()
		own := cas.NewObjectSet()
		f, err := cas.WriteFile(own, []byte(id+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		tree, err := cas.UpdateTree(multi{own, store}, own, tree0, map[string]cas.ID{id + ".md": f})
		if err != nil {
			t.Fatal(err)
		}
		c := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: head0.ID, Publication: id, Message: []byte(id)})
		mustPutObj(t, own, c)
		for _, oid := range own.IDs() {
			o, _ := own.Get(oid)
			if o.Kind == cas.KindTree && !withTree {
				continue
			}
			if err := w.Put(o); err != nil {
				t.Fatal(err)
			}
		}
		data, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		pack, err := cas.OpenPack(data)
		if err != nil {
			t.Fatal(err)
		}
		return proposal{desc: remote.ProposalV4{Publication: id, Parent: 1, ParentHead: head0.ID, Head: c.ID, Time: 1}, pack: pack}
	}

	objects := &treeCounter{Source: store}
	f, err := fold(state, []proposal{version("mine", true)}, "mine", objects)
	if err != nil || len(f.members) != 1 || len(f.declined) != 0 || f.group != nil {
		t.Fatalf("own version alone: %+v, %v; want it taken as it is", f, err)
	}
	if objects.trees != 0 {
		t.Fatalf("own version alone: the fold read %d trees, want none", objects.trees)
	}

	f, err = fold(state, []proposal{version("theirs", false)}, "mine", objects)
	if err != nil || len(f.members) != 0 || len(f.declined) != 1 {
		t.Fatalf("another writer's version without its tree: %+v, %v; want it declined", f, err)
	}
}

func mustPutObj(t *testing.T, s cas.Sink, o cas.Object) {
	t.Helper()
	if err := s.Put(o); err != nil {
		t.Fatal(err)
	}
}
