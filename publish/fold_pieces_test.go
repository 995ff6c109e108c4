package publish

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A fold begun on some versions and extended with the ones that follow
// them (a folder folding while it gathers, then what its later LISTs
// added) writes exactly what folding them all at once writes: the same
// members, heads, declines and group pack, wherever the split falls, and
// whether or not the fold's result was taken in between.
func TestFoldInPiecesIsTheFoldAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	e.commit(map[string]*string{"notes.md": str("a\nb\nc\n"), "gone.md": str("x\n")})
	e.register(map[string]*string{"notes.md": str("a2\nb\nc\n"), "gone.md": nil})
	e.register(map[string]*string{"notes.md": str("a\nb\nc\nd\n")}) // merges three-way
	e.register(map[string]*string{"notes.md": str("A\nb\nc\n")})    // conflicts with the first
	e.register(map[string]*string{"gone.md": str("y\n")})           // modify/delete
	e.register(map[string]*string{"new.md": str("n\n")})
	ctx := context.Background()
	data, etag, err := e.mem.Get(ctx, remote.CurrentKey)
	if err != nil {
		t.Fatal(err)
	}
	m, err := remote.DecodeManifestV4(data)
	if err != nil {
		t.Fatal(err)
	}
	c := State{Manifest: m, ETag: etag}
	w := &call{}
	var props []proposal
	objs, err := e.mem.List(ctx, remote.ProposalsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if kind, g, id, _, _ := remote.ParseProposalEntry(o.Key); kind == remote.EntryProposal && g == 1 {
			data, _, err := e.mem.Get(ctx, o.Key)
			if err != nil {
				t.Fatal(err)
			}
			w.keep(key{g, id}, o.Key, data)
			props = append(props, w.props[key{g, id}])
		}
	}
	slices.SortFunc(props, func(a, b proposal) int { return strings.Compare(a.desc.Publication, b.desc.Publication) })
	objects, err := allPacks(e.mem)(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := fold(c, props, "", objects)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.members) != 3 || len(whole.declined) != 2 || whole.group == nil {
		t.Fatalf("the fold at once: %d members, %d declined, group %v", len(whole.members), len(whole.declined), whole.group != nil)
	}
	for split := 0; split <= len(props); split++ {
		f := newFolding(c, "", objects)
		if err := f.add(props[:split]); err != nil {
			t.Fatal(err)
		}
		if _, err := f.result(); err != nil { // a fold taken early can still be extended
			t.Fatal(err)
		}
		if err := f.add(props[split:]); err != nil {
			t.Fatal(err)
		}
		got, err := f.result()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.members, whole.members) || !slices.Equal(got.declined, whole.declined) || !bytes.Equal(got.group, whole.group) {
			t.Errorf("split at %d: %+v\nat once: %+v", split, got, whole)
		}
	}
}

// fold is the fold of props at once on c.
func fold(c State, props []proposal, own string, objects cas.Source) (folded, error) {
	f := newFolding(c, own, objects)
	if err := f.add(props); err != nil {
		return folded{}, err
	}
	return f.result()
}
